// Package memstored is the Go binding of memstored's storage library, with
// the API of Tkrzw's Go binding (tkrzw-go): programs written for it run
// with the import path and package name changed.
//
// Keys and values may be given as strings, byte slices or numbers (numbers
// are stored as decimal text). A DBM is safe for concurrent use by many
// goroutines; an Iterator is used by one goroutine at a time.
package memstored

/*
#include "ms_helpers.h"
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"strconv"
	"unsafe"
)

// DBM is a database handle: make it with NewDBM, then Open.
type DBM struct {
	dbm  *C.MemstoredDBM
	path string // as given to Open, for GetFilePath
}

// KeyValuePair is a record as bytes; in CompareExchangeMulti a nil Value
// means "no record" and AnyBytes "any value".
type KeyValuePair struct {
	Key   []byte
	Value []byte
}

// KeyValueStrPair is a record as strings; in CompareExchangeMultiStr a
// Value of NilString means "no record" and AnyString "any value".
type KeyValueStrPair struct {
	Key   string
	Value string
}

func notOpen() *Status { return NewStatus2(StatusPreconditionError, "not opened database") }

// NewDBM makes a database handle, not yet open.
func NewDBM() *DBM { return &DBM{} }

// String describes the handle: its path and number of records.
func (self *DBM) String() string {
	if self.dbm == nil {
		return "#<memstored.DBM:unopened>"
	}
	return fmt.Sprintf("#<memstored.DBM:%s:%d>", strconv.Quote(self.path), self.CountSimple())
}

// Open opens a database. The path picks the engine: "casket.tkh" a hash
// file, "casket.tkt" an ordered file, "*" in-memory hash, "+" in-memory
// ordered. params is a "k=v,k=v" string or a map[string]string (or nil),
// e.g. "truncate=true,num_buckets=100".
func (self *DBM) Open(path string, writable bool, params interface{}) *Status {
	if self.dbm != nil {
		return NewStatus2(StatusPreconditionError, "opened database")
	}
	joined, bad := joinParams(params)
	if bad != nil {
		return bad
	}
	cpath, cparams := C.CString(path), C.CString(joined)
	defer C.free(unsafe.Pointer(cpath))
	defer C.free(unsafe.Pointer(cparams))
	var out *C.MemstoredDBM
	r := C.ms_open(cpath, C.bool(writable), cparams, &out)
	self.dbm, self.path = out, path
	return statusOf(r.code, r.msg)
}

// Close closes the database; the handle can be opened again.
func (self *DBM) Close() *Status {
	if self.dbm == nil {
		return notOpen()
	}
	r := C.ms_close(self.dbm)
	self.dbm = nil
	return statusOf(r.code, r.msg)
}

// Destruct closes the database if it is open.
func (self *DBM) Destruct() {
	if self.dbm != nil {
		self.Close()
	}
}

// IsOpen tells whether the database is open.
func (self *DBM) IsOpen() bool { return self.dbm != nil }

// inlineValue is the size of the stack buffer a get copies its value into:
// up to it (seed 004's values are 8 bytes) a get is one cgo call and no C
// allocation; a larger value takes a second, allocating call.
const inlineValue = 128

// fetch runs a get: a small value (up to inlineValue bytes) comes back as
// a slice of buf, a larger one in C memory at r.ptr for takeBytes or
// takeString; a failure, as neither (small nil, r.ptr NULL).
func (self *DBM) fetch(key interface{}, buf *[inlineValue]byte) (small []byte, r C.ms_res, st *Status) {
	if self.dbm == nil {
		return nil, r, notOpen()
	}
	k := argOf(key)
	r = C.ms_get_to(self.dbm, k.ptr, k.size, (*C.char)(unsafe.Pointer(&buf[0])), inlineValue)
	if r.code == C.MEMSTORED_STATUS_SUCCESS && r.size > inlineValue {
		r = C.ms_get(self.dbm, k.ptr, k.size)
		return nil, r, statusOf(r.code, r.msg)
	}
	if st = statusOf(r.code, r.msg); !st.IsOK() {
		return nil, C.ms_res{}, st
	}
	return buf[:r.size], r, st
}

// Get returns the value of a key; StatusNotFoundError when absent.
func (self *DBM) Get(key interface{}) ([]byte, *Status) {
	var buf [inlineValue]byte
	small, r, st := self.fetch(key, &buf)
	if small == nil {
		return takeBytes(r.ptr, r.size), st
	}
	v := make([]byte, len(small)) // never nil: an empty value is not an absent one
	copy(v, small)
	return v, st
}

// GetStr is Get returning a string.
func (self *DBM) GetStr(key interface{}) (string, *Status) {
	var buf [inlineValue]byte
	small, r, st := self.fetch(key, &buf)
	if small == nil {
		return takeString(r.ptr, r.size), st
	}
	return string(small), st
}

// GetSimple returns the value of a key, or defaultValue when there is none.
func (self *DBM) GetSimple(key interface{}, defaultValue interface{}) []byte {
	if v, st := self.Get(key); st.IsOK() {
		return v
	}
	return ToByteArray(defaultValue)
}

// GetStrSimple is GetSimple returning a string.
func (self *DBM) GetStrSimple(key interface{}, defaultValue interface{}) string {
	if v, st := self.GetStr(key); st.IsOK() {
		return v
	}
	return ToString(defaultValue)
}

// Check tells whether a record exists.
func (self *DBM) Check(key interface{}) bool {
	_, st := self.Get(key)
	return st.IsOK()
}

// Set stores a record; with overwrite false an existing record is kept and
// StatusDuplicationError returned.
func (self *DBM) Set(key interface{}, value interface{}, overwrite bool) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	k, v := argOf(key), argOf(value)
	r := C.ms_set(self.dbm, k.ptr, k.size, v.ptr, v.size, C.bool(overwrite))
	return statusOf(r.code, r.msg)
}

// SetAndGet stores a record and returns the old value (nil when there was
// none), atomically. With overwrite false and a record present, nothing
// changes and StatusDuplicationError comes with the old value.
func (self *DBM) SetAndGet(key interface{}, value interface{}, overwrite bool) ([]byte, *Status) {
	if self.dbm == nil {
		return nil, notOpen()
	}
	k, v := argOf(key), argOf(value)
	r := C.ms_set_and_get(self.dbm, k.ptr, k.size, v.ptr, v.size, C.bool(overwrite))
	return takeBytes(r.ptr, r.size), statusOf(r.code, r.msg)
}

// SetAndGetStr is SetAndGet with the old value as a string (nil when none).
func (self *DBM) SetAndGetStr(key interface{}, value interface{}, overwrite bool) (*string, *Status) {
	old, st := self.SetAndGet(key, value, overwrite)
	return strPtr(old), st
}

func strPtr(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// Remove removes a record; StatusNotFoundError when absent.
func (self *DBM) Remove(key interface{}) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	k := argOf(key)
	r := C.ms_remove(self.dbm, k.ptr, k.size)
	return statusOf(r.code, r.msg)
}

// RemoveAndGet removes a record and returns its value, atomically.
func (self *DBM) RemoveAndGet(key interface{}) ([]byte, *Status) {
	if self.dbm == nil {
		return nil, notOpen()
	}
	k := argOf(key)
	r := C.ms_remove_and_get(self.dbm, k.ptr, k.size)
	return takeBytes(r.ptr, r.size), statusOf(r.code, r.msg)
}

// RemoveAndGetStr is RemoveAndGet with the value as a string (nil when none).
func (self *DBM) RemoveAndGetStr(key interface{}) (*string, *Status) {
	old, st := self.RemoveAndGet(key)
	return strPtr(old), st
}

// Append appends the value after delim to the record, or stores the value
// when the record is absent.
func (self *DBM) Append(key interface{}, value interface{}, delim interface{}) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	k, v, d := argOf(key), argOf(value), argOf(delim)
	r := C.ms_append(self.dbm, k.ptr, k.size, v.ptr, v.size, d.ptr, d.size)
	return statusOf(r.code, r.msg)
}

// Increment adds inc to the record's decimal value (an absent record counts
// as init) and returns the new value.
func (self *DBM) Increment(key interface{}, inc interface{}, init interface{}) (int64, *Status) {
	if self.dbm == nil {
		return 0, notOpen()
	}
	k := argOf(key)
	var out C.int64_t
	r := C.ms_increment(self.dbm, k.ptr, k.size, C.int64_t(ToInt(inc)), C.int64_t(ToInt(init)), &out)
	return int64(out), statusOf(r.code, r.msg)
}

// GetMulti returns the records of the keys that exist.
func (self *DBM) GetMulti(keys []string) map[string][]byte {
	out := map[string][]byte{}
	self.getMulti(keys, func(k, v []byte) { out[string(k)] = v })
	return out
}

// GetMultiStr is GetMulti with string values.
func (self *DBM) GetMultiStr(keys []string) map[string]string {
	out := map[string]string{}
	self.getMulti(keys, func(k, v []byte) { out[string(k)] = string(v) })
	return out
}

// getMulti hands the records found to put; its status is the C call's
// (StatusNotFoundError when some keys were absent).
func (self *DBM) getMulti(keys []string, put func(k, v []byte)) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	p := &packed{}
	for _, k := range keys {
		p.addStr(k)
	}
	r := C.ms_get_multi(self.dbm, p.bufPtr(), p.sizesPtr(), C.int32_t(len(keys)))
	st := statusOf(r.code, r.msg)
	eachPair(r.ptr, r.size, put)
	return st
}

// eachPair hands the pairs of a returned array to put, then releases it.
func eachPair(ptr *C.char, n C.int32_t, put func(k, v []byte)) {
	if ptr == nil {
		return
	}
	pairs := unsafe.Slice((*C.MemstoredKeyValuePair)(unsafe.Pointer(ptr)), int(n))
	for _, p := range pairs {
		put(goBytes(p.key_ptr, p.key_size), goBytes(p.value_ptr, p.value_size))
	}
	C.memstored_free(unsafe.Pointer(ptr))
}

// SetMulti stores every record; with overwrite false existing ones are kept
// and StatusDuplicationError returned after the others are stored.
func (self *DBM) SetMulti(records map[string][]byte, overwrite bool) *Status {
	p := &packed{}
	for k, v := range records {
		p.addStr(k)
		p.add(v)
	}
	return self.setMulti(p, len(records), overwrite)
}

// SetMultiStr is SetMulti with string values.
func (self *DBM) SetMultiStr(records map[string]string, overwrite bool) *Status {
	p := &packed{}
	for k, v := range records {
		p.addStr(k)
		p.addStr(v)
	}
	return self.setMulti(p, len(records), overwrite)
}

func (self *DBM) setMulti(p *packed, n int, overwrite bool) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	r := C.ms_set_multi(self.dbm, p.bufPtr(), p.sizesPtr(), C.int32_t(n), C.bool(overwrite))
	return statusOf(r.code, r.msg)
}

// RemoveMulti removes every key; StatusNotFoundError when some were absent
// (the others are removed).
func (self *DBM) RemoveMulti(keys []string) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	p := &packed{}
	for _, k := range keys {
		p.addStr(k)
	}
	r := C.ms_remove_multi(self.dbm, p.bufPtr(), p.sizesPtr(), C.int32_t(len(keys)))
	return statusOf(r.code, r.msg)
}

// Count returns the number of records.
func (self *DBM) Count() (int64, *Status) {
	if self.dbm == nil {
		return -1, notOpen()
	}
	var out C.int64_t
	r := C.ms_count(self.dbm, &out)
	return int64(out), statusOf(r.code, r.msg)
}

// CountSimple returns the number of records, or -1 on failure.
func (self *DBM) CountSimple() int64 {
	n, _ := self.Count()
	return n
}

// Clear removes every record.
func (self *DBM) Clear() *Status {
	if self.dbm == nil {
		return notOpen()
	}
	r := C.ms_clear(self.dbm)
	return statusOf(r.code, r.msg)
}

// Rebuild compacts the files while other goroutines keep using the
// database. params is accepted for Tkrzw's signature and not used.
func (self *DBM) Rebuild(params map[string]string) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	r := C.ms_rebuild(self.dbm, nil)
	return statusOf(r.code, r.msg)
}

// ShouldBeRebuilt tells whether dead records take more than half of a file.
func (self *DBM) ShouldBeRebuilt() (bool, *Status) {
	if self.dbm == nil {
		return false, notOpen()
	}
	var out C.bool
	r := C.ms_should_be_rebuilt(self.dbm, &out)
	return bool(out), statusOf(r.code, r.msg)
}

// ShouldBeRebuiltSimple is ShouldBeRebuilt without the status.
func (self *DBM) ShouldBeRebuiltSimple() bool {
	b, _ := self.ShouldBeRebuilt()
	return b
}

// Synchronize writes buffered data to the OS, and with hard to the device.
// params is accepted for Tkrzw's signature and not used.
func (self *DBM) Synchronize(hard bool, params map[string]string) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	r := C.ms_synchronize(self.dbm, C.bool(hard), nil)
	return statusOf(r.code, r.msg)
}

// Search returns keys matching a pattern: mode is "contain", "containcase",
// "begin", "end", "regex", "edit", "editbin", and on ordered databases
// "upper", "upperex", "lower", "lowerex". capacity 0 means no limit.
// Failures (a bad mode or regex) give an empty result.
func (self *DBM) Search(mode string, pattern string, capacity int) []string {
	out, _ := self.search(mode, pattern, capacity)
	return out
}

// search is Search with the status (a bad mode or regex fails).
func (self *DBM) search(mode string, pattern string, capacity int) ([]string, *Status) {
	if self.dbm == nil {
		return []string{}, notOpen()
	}
	cmode := C.CString(mode)
	defer C.free(unsafe.Pointer(cmode))
	p := strArg(pattern)
	r := C.ms_search(self.dbm, cmode, p.ptr, p.size, C.int32_t(capacity))
	return takeStrs(r.ptr, r.size), statusOf(r.code, r.msg)
}

// Inspect returns the database's properties.
func (self *DBM) Inspect() map[string]string {
	out := map[string]string{}
	if self.dbm == nil {
		return out
	}
	r := C.ms_inspect(self.dbm)
	statusOf(r.code, r.msg)
	eachPair(r.ptr, r.size, func(k, v []byte) { out[string(k)] = string(v) })
	return out
}

// IsWritable tells whether the database was opened writable.
func (self *DBM) IsWritable() bool {
	return self.dbm != nil && bool(C.memstored_dbm_is_writable(self.dbm))
}

// IsOrdered tells whether iteration visits keys in order.
func (self *DBM) IsOrdered() bool {
	return self.dbm != nil && bool(C.memstored_dbm_is_ordered(self.dbm))
}

// MakeIterator makes an iterator; release it with Destruct.
func (self *DBM) MakeIterator() *Iterator {
	it := &Iterator{dbm: self, handle: self.dbm}
	if self.dbm != nil {
		var out *C.MemstoredDBMIter
		C.ms_make_iterator(self.dbm, &out)
		it.it = out
	}
	return it
}

// Each sends every record on a channel, from a goroutine that releases its
// iterator when the records run out (read the channel to its end).
func (self *DBM) Each() <-chan KeyValuePair {
	ch := make(chan KeyValuePair)
	go func() {
		defer close(ch)
		it := self.MakeIterator()
		defer it.Destruct()
		if !it.First().IsOK() {
			return
		}
		for {
			k, v, st := it.Step()
			if !st.IsOK() {
				return
			}
			ch <- KeyValuePair{k, v}
		}
	}()
	return ch
}

// EachStr is Each with strings.
func (self *DBM) EachStr() <-chan KeyValueStrPair {
	ch := make(chan KeyValueStrPair)
	go func() {
		defer close(ch)
		for rec := range self.Each() {
			ch <- KeyValueStrPair{string(rec.Key), string(rec.Value)}
		}
	}()
	return ch
}
