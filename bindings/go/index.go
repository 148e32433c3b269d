package memstored

import (
	"bytes"
	"fmt"
)

// Index is Tkrzw's secondary index: an ordered set of (key, value) pairs,
// many values a key, kept in an ordered database: a file when the path
// ends in ".tkt", else in memory. Safe for concurrent use.
//
// Each pair is one record whose key is the index key with every 0x00 byte
// written as 0x00 0x01, then 0x00 0x00, then the value: records sort by
// index key, then by value, as Tkrzw's pairs do.
type Index struct {
	dbm *DBM
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

// indexKey is the record key of a pair: the escaped key, 0x00 0x00, the value.
func indexKey(key, value []byte) []byte {
	out := make([]byte, 0, len(key)+len(value)+4)
	for _, b := range key {
		out = append(out, b)
		if b == 0 {
			out = append(out, 1)
		}
	}
	out = append(out, 0, 0)
	return append(out, value...)
}

// splitIndexKey undoes indexKey; ok false for a record not made by it.
func splitIndexKey(rec []byte) (key, value []byte, ok bool) {
	key = []byte{}
	for i := 0; i+1 < len(rec); i++ {
		if rec[i] != 0 {
			key = append(key, rec[i])
			continue
		}
		switch rec[i+1] {
		case 0:
			return key, rec[i+2:], true
		case 1:
			key = append(key, 0)
			i++
		default:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// Open opens the index: path "" or without ".tkt" keeps it in memory.
// params are the database's (e.g. "truncate=true"); Tkrzw's key_comparator
// is accepted and ignored (the order is always by key, then value).
func (self *Index) Open(path string, writable bool, params interface{}) *Status {
	if self.IsOpen() {
		return NewStatus2(StatusPreconditionError, "opened index")
	}
	joined, bad := joinParams(params)
	if bad != nil {
		return bad
	}
	p := ParseParams(joined)
	delete(p, "key_comparator")
	name := "+"
	if len(path) > 4 && path[len(path)-4:] == ".tkt" {
		name = path
	}
	dbm := NewDBM()
	if st := dbm.Open(name, writable || name == "+", p); !st.IsOK() {
		return st
	}
	dbm.path = path
	self.dbm = dbm
	return NewStatus()
}

// Close closes the index; the handle can be opened again.
func (self *Index) Close() *Status {
	if !self.IsOpen() {
		return notOpenIndex()
	}
	st := self.dbm.Close()
	self.dbm = nil
	return st
}

// Check tells whether the pair is in the index.
func (self *Index) Check(key interface{}, value interface{}) bool {
	return self.IsOpen() && self.dbm.Check(indexKey(ToByteArray(key), ToByteArray(value)))
}

// GetValues returns the values of a key in order, at most max (0: all).
func (self *Index) GetValues(key interface{}, max int) [][]byte {
	out := [][]byte{}
	if !self.IsOpen() {
		return out
	}
	prefix := indexKey(ToByteArray(key), nil)
	it := self.dbm.MakeIterator()
	defer it.Destruct()
	if !it.Jump(prefix).IsOK() {
		return out
	}
	for max <= 0 || len(out) < max {
		rec, st := it.GetKey()
		if !st.IsOK() || !bytes.HasPrefix(rec, prefix) {
			break
		}
		out = append(out, rec[len(prefix):])
		if !it.Next().IsOK() {
			break
		}
	}
	return out
}

// GetValuesStr is GetValues with strings.
func (self *Index) GetValuesStr(key interface{}, max int) []string {
	values := self.GetValues(key, max)
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// Add adds the pair (adding a pair already there changes nothing).
func (self *Index) Add(key interface{}, value interface{}) *Status {
	if !self.IsOpen() {
		return notOpenIndex()
	}
	return self.dbm.Set(indexKey(ToByteArray(key), ToByteArray(value)), "", true)
}

// Remove removes the pair; StatusNotFoundError when it is not there.
func (self *Index) Remove(key interface{}, value interface{}) *Status {
	if !self.IsOpen() {
		return notOpenIndex()
	}
	return self.dbm.Remove(indexKey(ToByteArray(key), ToByteArray(value)))
}

// Count returns the number of pairs (0 when not open).
func (self *Index) Count() int64 {
	if !self.IsOpen() {
		return 0
	}
	return max(0, self.dbm.CountSimple())
}

// GetFilePath returns the path the index was opened with.
func (self *Index) GetFilePath() string {
	if !self.IsOpen() {
		return ""
	}
	return self.dbm.path
}

// Clear removes every pair.
func (self *Index) Clear() *Status {
	if !self.IsOpen() {
		return notOpenIndex()
	}
	return self.dbm.Clear()
}

// Rebuild compacts the index's file.
func (self *Index) Rebuild() *Status {
	if !self.IsOpen() {
		return notOpenIndex()
	}
	return self.dbm.Rebuild(nil)
}

// Synchronize writes the index to the file (with hard, to the device).
func (self *Index) Synchronize(hard bool) *Status {
	if !self.IsOpen() {
		return notOpenIndex()
	}
	return self.dbm.Synchronize(hard, nil)
}

// IsOpen tells whether the index is open.
func (self *Index) IsOpen() bool { return self.dbm != nil && self.dbm.IsOpen() }

// IsWritable tells whether the index can be changed.
func (self *Index) IsWritable() bool { return self.IsOpen() && self.dbm.IsWritable() }

// MakeIterator makes an iterator over the pairs; release it with Destruct.
func (self *Index) MakeIterator() *IndexIterator {
	if !self.IsOpen() {
		return &IndexIterator{}
	}
	return &IndexIterator{it: self.dbm.MakeIterator()}
}

// IndexIterator walks an Index's pairs in order. Use it from one goroutine
// at a time.
type IndexIterator struct {
	it *Iterator
}

// Destruct releases the iterator.
func (self *IndexIterator) Destruct() {
	if self.it != nil {
		self.it.Destruct()
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

func (self *IndexIterator) move(f func(it *Iterator) *Status) {
	if self.it != nil {
		f(self.it)
	}
}

// First moves to the first pair.
func (self *IndexIterator) First() { self.move((*Iterator).First) }

// Last moves to the last pair.
func (self *IndexIterator) Last() { self.move((*Iterator).Last) }

// Jump moves to the first pair at or after (key, value).
func (self *IndexIterator) Jump(key interface{}, value interface{}) {
	rec := indexKey(ToByteArray(key), ToByteArray(value))
	self.move(func(it *Iterator) *Status { return it.Jump(rec) })
}

// Next moves to the next pair.
func (self *IndexIterator) Next() { self.move((*Iterator).Next) }

// Previous moves to the previous pair.
func (self *IndexIterator) Previous() { self.move((*Iterator).Previous) }

// Get returns the current pair, and false when there is none.
func (self *IndexIterator) Get() ([]byte, []byte, bool) {
	if self.it == nil {
		return nil, nil, false
	}
	rec, st := self.it.GetKey()
	if !st.IsOK() {
		return nil, nil, false
	}
	return splitIndexKey(rec)
}

// GetStr is Get with strings.
func (self *IndexIterator) GetStr() (string, string, bool) {
	k, v, ok := self.Get()
	return string(k), string(v), ok
}
