package memstored

/*
#include "ms_helpers.h"
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// Index is Tkrzw's secondary index: an ordered set of (key, value) pairs,
// many values a key, ordered by key, then by value. The path names a tree
// file when it ends in ".tkt"; any other keeps the index in memory. Safe
// for concurrent use. It is the C API's memstored_index_* (the engine's
// Index).
type Index struct {
	// mu guards x: calls hold it shared, Open and Close exclusively, so
	// that no call uses a handle Close has released.
	mu sync.RWMutex
	x  *C.MemstoredIndex
}

// NewIndex makes an index handle, not yet open.
func NewIndex() *Index { return &Index{} }

// Destruct closes the index if it is open.
func (self *Index) Destruct() {
	if self.IsOpen() {
		self.Close()
	}
}

// String describes the index.
func (self *Index) String() string {
	if !self.IsOpen() {
		return "#<memstored.Index:unopened>"
	}
	return fmt.Sprintf("#<memstored.Index:%s:%d>", self.GetFilePath(), self.Count())
}

func notOpenIndex() *Status { return NewStatus2(StatusPreconditionError, "not opened index") }

// with runs call on the open handle, or answers StatusPreconditionError.
func (self *Index) with(call func(x *C.MemstoredIndex) C.ms_res) *Status {
	self.mu.RLock()
	defer self.mu.RUnlock()
	if self.x == nil {
		return notOpenIndex()
	}
	r := call(self.x)
	return statusOf(r.code, r.msg)
}

// Open opens the index: path "" or without ".tkt" keeps it in memory.
// params are the database's (e.g. "truncate=true"); Tkrzw's key_comparator
// is accepted and ignored (the order is always by key, then value).
func (self *Index) Open(path string, writable bool, params interface{}) *Status {
	joined, bad := joinParams(params)
	if bad != nil {
		return bad
	}
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.x != nil {
		return NewStatus2(StatusPreconditionError, "opened index")
	}
	cpath, cparams := C.CString(path), C.CString(joined)
	defer C.free(unsafe.Pointer(cpath))
	defer C.free(unsafe.Pointer(cparams))
	r := C.ms_index_open(cpath, C.bool(writable), cparams, &self.x)
	return statusOf(r.code, r.msg)
}

// Close closes the index; the handle can be opened again.
func (self *Index) Close() *Status {
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.x == nil {
		return notOpenIndex()
	}
	r := C.ms_index_close(self.x)
	self.x = nil
	return statusOf(r.code, r.msg)
}

// pair runs MS_INDEX_CHECK, MS_INDEX_ADD or MS_INDEX_REMOVE on a pair.
func (self *Index) pair(op C.int, key, value interface{}) (bool, *Status) {
	k, v := argOf(key), argOf(value)
	var out C.bool
	st := self.with(func(x *C.MemstoredIndex) C.ms_res {
		return C.ms_index_pair(x, op, k.ptr, k.size, v.ptr, v.size, &out)
	})
	return bool(out), st
}

// Check tells whether the pair is in the index.
func (self *Index) Check(key interface{}, value interface{}) bool {
	found, _ := self.pair(C.MS_INDEX_CHECK, key, value)
	return found
}

// GetValues returns the values of a key in order, at most max (0: all).
func (self *Index) GetValues(key interface{}, max int) [][]byte {
	values := self.GetValuesStr(key, max)
	out := make([][]byte, len(values))
	for i, v := range values {
		out[i] = []byte(v)
	}
	return out
}

// GetValuesStr is GetValues with strings.
func (self *Index) GetValuesStr(key interface{}, max int) []string {
	k := argOf(key)
	out := []string{}
	self.with(func(x *C.MemstoredIndex) C.ms_res {
		r := C.ms_index_get_values(x, k.ptr, k.size, C.int32_t(max))
		out = takeStrs(r.ptr, r.size)
		return r
	})
	return out
}

// Add adds the pair (adding a pair already there changes nothing).
func (self *Index) Add(key interface{}, value interface{}) *Status {
	_, st := self.pair(C.MS_INDEX_ADD, key, value)
	return st
}

// Remove removes the pair; StatusNotFoundError when it is not there.
func (self *Index) Remove(key interface{}, value interface{}) *Status {
	_, st := self.pair(C.MS_INDEX_REMOVE, key, value)
	return st
}

// Count returns the number of pairs (0 when not open).
func (self *Index) Count() int64 {
	var n C.int32_t
	if !self.with(func(x *C.MemstoredIndex) C.ms_res { return C.ms_index_count(x, &n) }).IsOK() {
		return 0
	}
	return int64(n)
}

// GetFilePath returns the path the index was opened with ("" when not open).
func (self *Index) GetFilePath() string {
	var path string
	self.with(func(x *C.MemstoredIndex) C.ms_res {
		r := C.ms_index_get_file_path(x)
		path = takeString(r.ptr, r.size)
		return r
	})
	return path
}

// do runs MS_INDEX_CLEAR, MS_INDEX_REBUILD or MS_INDEX_SYNC(_HARD).
func (self *Index) do(op C.int) *Status {
	return self.with(func(x *C.MemstoredIndex) C.ms_res { return C.ms_index_do(x, op) })
}

// Clear removes every pair.
func (self *Index) Clear() *Status { return self.do(C.MS_INDEX_CLEAR) }

// Rebuild compacts the index's file.
func (self *Index) Rebuild() *Status { return self.do(C.MS_INDEX_REBUILD) }

// Synchronize writes the index to the file (with hard, to the device).
func (self *Index) Synchronize(hard bool) *Status {
	if hard {
		return self.do(C.MS_INDEX_SYNC_HARD)
	}
	return self.do(C.MS_INDEX_SYNC)
}

// IsOpen tells whether the index is open.
func (self *Index) IsOpen() bool {
	self.mu.RLock()
	defer self.mu.RUnlock()
	return self.x != nil
}

// IsWritable tells whether the index can be changed.
func (self *Index) IsWritable() bool {
	var out C.bool
	self.with(func(x *C.MemstoredIndex) C.ms_res { return C.ms_index_is_writable(x, &out) })
	return bool(out)
}

// MakeIterator makes an iterator over the pairs; release it with Destruct.
// It keeps the index's data alive: the index may be closed before it.
func (self *Index) MakeIterator() *IndexIterator {
	it := &IndexIterator{}
	self.with(func(x *C.MemstoredIndex) C.ms_res { return C.ms_index_make_iterator(x, &it.it) })
	return it
}

// IndexIterator walks an Index's pairs in order. Use it from one goroutine
// at a time.
type IndexIterator struct {
	it *C.MemstoredIndexIter
}

// Destruct releases the iterator.
func (self *IndexIterator) Destruct() {
	if self.it != nil {
		C.memstored_index_iter_free(self.it)
		self.it = nil
	}
}

// String describes the iterator.
func (self *IndexIterator) String() string {
	if self.it == nil {
		return "#<memstored.IndexIterator:unopened>"
	}
	k, v, ok := self.GetStr()
	if !ok {
		return "#<memstored.IndexIterator:unlocated>"
	}
	return fmt.Sprintf("#<memstored.IndexIterator:%q:%q>", k, v)
}

func (self *IndexIterator) move(op C.int, key, value interface{}) {
	if self.it == nil {
		return
	}
	k, v := argOf(key), argOf(value)
	r := C.ms_index_iter_move(self.it, op, k.ptr, k.size, v.ptr, v.size)
	statusOf(r.code, r.msg)
}

// First moves to the first pair.
func (self *IndexIterator) First() { self.move(C.MS_FIRST, nil, nil) }

// Last moves to the last pair.
func (self *IndexIterator) Last() { self.move(C.MS_LAST, nil, nil) }

// Jump moves to the first pair at or after (key, value).
func (self *IndexIterator) Jump(key interface{}, value interface{}) {
	self.move(C.MS_JUMP, key, value)
}

// Next moves to the next pair.
func (self *IndexIterator) Next() { self.move(C.MS_NEXT, nil, nil) }

// Previous moves to the previous pair.
func (self *IndexIterator) Previous() { self.move(C.MS_PREVIOUS, nil, nil) }

// Get returns the current pair, and false when there is none.
func (self *IndexIterator) Get() ([]byte, []byte, bool) {
	if self.it == nil {
		return nil, nil, false
	}
	r := C.ms_index_iter_get(self.it)
	ok := statusOf(r.code, r.msg).IsOK()
	k, v := takeBytes(r.key, r.key_size), takeBytes(r.value, r.value_size)
	return k, v, ok
}

// GetStr is Get with strings.
func (self *IndexIterator) GetStr() (string, string, bool) {
	k, v, ok := self.Get()
	return string(k), string(v), ok
}
