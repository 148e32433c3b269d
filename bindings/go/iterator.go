package memstored

/*
#include "ms_helpers.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Iterator walks a database's records; make it with DBM.MakeIterator and
// release it with Destruct. Use it from one goroutine at a time.
type Iterator struct {
	it *C.MemstoredDBMIter
	// The database and the handle it had when the iterator was made: once
	// it is closed (or reopened), the iterator answers
	// StatusPreconditionError, as Tkrzw's does.
	dbm    *DBM
	handle *C.MemstoredDBM
}

func noIterator() *Status { return NewStatus2(StatusPreconditionError, "destructed iterator") }

// usable returns the failure of an iterator that cannot move or read: one
// destructed, or whose database was closed; nil otherwise.
func (self *Iterator) usable() *Status {
	if self.it == nil {
		return noIterator()
	}
	if self.dbm != nil && self.dbm.dbm != self.handle {
		return NewStatus2(StatusPreconditionError, "the database of the iterator is closed")
	}
	return nil
}

// Destruct releases the iterator.
func (self *Iterator) Destruct() {
	if self.it != nil {
		C.memstored_dbm_iter_free(self.it)
		self.it = nil
	}
}

// String describes the iterator.
func (self *Iterator) String() string {
	return fmt.Sprintf("#<memstored.Iterator:%p>", self.it)
}

func (self *Iterator) move(op C.int, key interface{}, inclusive bool) *Status {
	if st := self.usable(); st != nil {
		return st
	}
	k := argOf(key)
	r := C.ms_iter_move(self.it, op, k.ptr, k.size, C.bool(inclusive))
	return statusOf(r.code, r.msg)
}

// First moves to the first record (in key order on ordered databases).
func (self *Iterator) First() *Status { return self.move(C.MS_FIRST, nil, false) }

// Last moves to the last record (ordered databases).
func (self *Iterator) Last() *Status { return self.move(C.MS_LAST, nil, false) }

// Jump moves to the record of the key; on ordered databases to the first
// key at or after it.
func (self *Iterator) Jump(key interface{}) *Status { return self.move(C.MS_JUMP, key, false) }

// JumpLower moves to the last record before the key (inclusive: at or before).
func (self *Iterator) JumpLower(key interface{}, inclusive bool) *Status {
	return self.move(C.MS_JUMP_LOWER, key, inclusive)
}

// JumpUpper moves to the first record after the key (inclusive: at or after).
func (self *Iterator) JumpUpper(key interface{}, inclusive bool) *Status {
	return self.move(C.MS_JUMP_UPPER, key, inclusive)
}

// Next moves to the next record.
func (self *Iterator) Next() *Status { return self.move(C.MS_NEXT, nil, false) }

// Previous moves to the previous record (ordered databases).
func (self *Iterator) Previous() *Status { return self.move(C.MS_PREVIOUS, nil, false) }

// Set replaces the value of the current record.
func (self *Iterator) Set(value interface{}) *Status { return self.move(C.MS_SET, value, false) }

// Remove removes the current record and moves to the next one.
func (self *Iterator) Remove() *Status { return self.move(C.MS_REMOVE, nil, false) }

// record reads the current record (and with step moves on), releasing the C copies.
func (self *Iterator) record(step, wantKey, wantValue bool) ([]byte, []byte, *Status) {
	if st := self.usable(); st != nil {
		return nil, nil, st
	}
	r := C.ms_iter_get(self.it, C.bool(step), C.bool(wantKey), C.bool(wantValue))
	var k, v []byte
	if r.key != nil {
		k = goBytes(r.key, r.key_size)
	}
	if r.value != nil {
		v = goBytes(r.value, r.value_size)
	}
	if r.key != nil || r.value != nil {
		C.ms_free2(unsafe.Pointer(r.key), unsafe.Pointer(r.value))
	}
	return k, v, statusOf(r.code, r.msg)
}

// Get returns the key and value of the current record.
func (self *Iterator) Get() ([]byte, []byte, *Status) { return self.record(false, true, true) }

// GetStr is Get with strings.
func (self *Iterator) GetStr() (string, string, *Status) {
	k, v, st := self.Get()
	return string(k), string(v), st
}

// GetKey returns the key of the current record.
func (self *Iterator) GetKey() ([]byte, *Status) {
	k, _, st := self.record(false, true, false)
	return k, st
}

// GetKeyStr is GetKey as a string.
func (self *Iterator) GetKeyStr() (string, *Status) {
	k, st := self.GetKey()
	return string(k), st
}

// GetValue returns the value of the current record.
func (self *Iterator) GetValue() ([]byte, *Status) {
	_, v, st := self.record(false, false, true)
	return v, st
}

// GetValueStr is GetValue as a string.
func (self *Iterator) GetValueStr() (string, *Status) {
	v, st := self.GetValue()
	return string(v), st
}

// Step returns the current record and moves to the next one;
// StatusNotFoundError past the end.
func (self *Iterator) Step() ([]byte, []byte, *Status) { return self.record(true, true, true) }

// StepStr is Step with strings.
func (self *Iterator) StepStr() (string, string, *Status) {
	k, v, st := self.Step()
	return string(k), string(v), st
}
