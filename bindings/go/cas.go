package memstored

/*
#include "ms_helpers.h"
*/
import "C"

import "bytes"

// The compare-exchange family with Tkrzw's special values. The single-key
// calls hand "any" to the C API (MEMSTORED_ANY_DATA). Its multi-key call
// takes a value or "no record" only, so there "any record" is resolved
// here: read the records, check the expectations, then compare-exchange
// against what was read, again when another writer got in between. Every
// success is therefore atomic at its compare-exchange, and every refusal
// is true of values the records held.

// optValue turns an expected or desired argument into bytes: nil for "no
// record" (nil, a nil slice, NilString), otherwise its bytes, an empty
// value being an empty, non-nil slice.
func optValue(x interface{}) []byte {
	if IsNilData(x) {
		return nil
	}
	if b := ToByteArray(x); b != nil {
		return b
	}
	return []byte{}
}

// casRaw is one compare-exchange: expected nil = must be absent, desired
// nil = remove.
func (self *DBM) casRaw(key arg, expected, desired []byte) *Status {
	e, d := bytesArg(expected), bytesArg(desired)
	r := C.ms_compare_exchange(self.dbm, key.ptr, key.size, e.ptr, e.size, C.bool(expected != nil),
		d.ptr, d.size, C.bool(desired != nil))
	return statusOf(r.code, r.msg)
}

// current reads a record for a compare-exchange: its value, or nil when
// absent (an empty value is an empty non-nil slice).
func (self *DBM) current(key interface{}) ([]byte, *Status) {
	v, st := self.Get(key)
	if st.Equals(StatusNotFoundError) {
		return nil, NewStatus()
	}
	return v, st
}

// holds tells whether a record's value (nil: absent) meets an expectation
// (nil: absent, AnyBytes: present, else equal).
func holds(cur, expected []byte) bool {
	switch {
	case expected == nil:
		return cur == nil
	case IsAnyBytes(expected):
		return cur != nil
	}
	return cur != nil && bytes.Equal(cur, expected)
}

// special maps AnyString to AnyBytes and other values through optValue.
func special(x interface{}) []byte {
	if IsAnyData(x) {
		return AnyBytes
	}
	return optValue(x)
}

// CompareExchange replaces the record when it meets expected (nil or
// NilString: absent; AnyBytes or AnyString: present with any value) with
// desired (nil or NilString: remove it; AnyBytes or AnyString: leave it);
// StatusInfeasibleError otherwise.
func (self *DBM) CompareExchange(key interface{}, expected interface{}, desired interface{}) *Status {
	exp, des := special(expected), special(desired)
	if self.dbm == nil || IsAnyBytes(exp) || IsAnyBytes(des) {
		_, st := self.CompareExchangeAndGet(key, expected, desired)
		return st
	}
	return self.casRaw(argOf(key), exp, des)
}

// CompareExchangeAndGet is CompareExchange that also returns the value
// the record held (nil when there was none), on success and on
// StatusInfeasibleError alike; one atomic call.
func (self *DBM) CompareExchangeAndGet(
	key interface{}, expected interface{}, desired interface{}) ([]byte, *Status) {
	if self.dbm == nil {
		return nil, notOpen()
	}
	exp, des := special(expected), special(desired)
	k, e, d := argOf(key), bytesArg(exp), bytesArg(des)
	r := C.ms_cas_and_get(self.dbm, k.ptr, k.size, e.ptr, e.size, C.bool(exp != nil), C.bool(IsAnyBytes(exp)),
		d.ptr, d.size, C.bool(des != nil), C.bool(IsAnyBytes(des)))
	return takeBytes(r.ptr, r.size), statusOf(r.code, r.msg)
}

// CompareExchangeAndGetStr is CompareExchangeAndGet with the old value as
// a string, NilString when there was none.
func (self *DBM) CompareExchangeAndGetStr(
	key interface{}, expected interface{}, desired interface{}) (string, *Status) {
	old, st := self.CompareExchangeAndGet(key, expected, desired)
	if old == nil {
		return NilString, st
	}
	return string(old), st
}

func packPairs(records []KeyValuePair) *packed {
	p := &packed{}
	for _, rec := range records {
		p.add(rec.Key)
		if rec.Value == nil {
			p.addNil()
		} else {
			p.add(rec.Value)
		}
	}
	return p
}

func (self *DBM) casMultiRaw(expected []KeyValuePair, desired []KeyValuePair) *Status {
	e, d := packPairs(expected), packPairs(desired)
	r := C.ms_compare_exchange_multi(self.dbm, e.bufPtr(), e.sizesPtr(), C.int32_t(len(expected)),
		d.bufPtr(), d.sizesPtr(), C.int32_t(len(desired)))
	return statusOf(r.code, r.msg)
}

// CompareExchangeMulti, atomically: when every expected record meets its
// value (nil: absent; AnyBytes: present with any value), stores every
// desired one (nil: removes it; AnyBytes: leaves it); else
// StatusInfeasibleError and nothing changes.
func (self *DBM) CompareExchangeMulti(expected []KeyValuePair, desired []KeyValuePair) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	anyExpected := false
	for _, rec := range expected {
		anyExpected = anyExpected || IsAnyBytes(rec.Value)
	}
	writes := make([]KeyValuePair, 0, len(desired))
	for _, rec := range desired {
		if !IsAnyBytes(rec.Value) {
			writes = append(writes, rec)
		}
	}
	if !anyExpected {
		return self.casMultiRaw(expected, writes)
	}
	for {
		seen := make([]KeyValuePair, len(expected))
		for i, rec := range expected {
			cur, st := self.current(rec.Key)
			if !st.IsOK() {
				return st
			}
			if !holds(cur, rec.Value) {
				return NewStatus2(StatusInfeasibleError, "a record does not hold the expected value")
			}
			seen[i] = KeyValuePair{rec.Key, cur}
		}
		if st := self.casMultiRaw(seen, writes); !st.Equals(StatusInfeasibleError) {
			return st
		}
	}
}

// CompareExchangeMultiStr is CompareExchangeMulti over strings: NilString
// means "no record" (expected: absent; desired: remove) and AnyString "any
// value"; every other string, the empty one included, is a value.
func (self *DBM) CompareExchangeMultiStr(expected []KeyValueStrPair, desired []KeyValueStrPair) *Status {
	toBytes := func(recs []KeyValueStrPair) []KeyValuePair {
		out := make([]KeyValuePair, len(recs))
		for i, rec := range recs {
			out[i] = KeyValuePair{[]byte(rec.Key), special(rec.Value)}
		}
		return out
	}
	return self.CompareExchangeMulti(toBytes(expected), toBytes(desired))
}
