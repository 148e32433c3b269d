package memstored

import (
	"encoding/binary"
	"time"
)

// RecordProcessor is called with a record's key and value (nil when the
// record is absent) and says what to do with it: nil or NilString keeps
// the record as it is, RemoveBytes or RemoveString removes it, anything
// else (bytes, string, number...) becomes its new value.
type RecordProcessor func(key []byte, value []byte) interface{}

// KeyProcPair is a key and the processor to run on its record.
type KeyProcPair struct {
	Key  interface{}
	Proc RecordProcessor
}

// KeyBytesProcPair is KeyProcPair with the key as bytes.
type KeyBytesProcPair struct {
	Key  []byte
	Proc RecordProcessor
}

// outcome turns a processor's answer about a record whose value is cur
// (nil: absent) into the value to store: (cur, false) to keep it, (nil,
// true) to remove it, (value, true) to store value.
func outcome(rv interface{}, cur []byte) ([]byte, bool) {
	switch {
	case IsNilData(rv):
		return cur, false
	case IsRemoveData(rv):
		return nil, cur != nil
	}
	return optValue(rv), true
}

// Process runs proc on the record of key (its value, or nil when absent)
// and, when writable, applies what proc returns (see RecordProcessor).
// The change is atomic: it is made by a compare-exchange against the value
// proc saw, and should another writer change the record in between, proc
// runs again on the new value.
func (self *DBM) Process(key interface{}, proc RecordProcessor, writable bool) *Status {
	return self.ProcessMulti([]KeyProcPair{{key, proc}}, writable)
}

// ProcessMulti runs each processor on its record in order (a key given
// twice sees the first processor's result) and, when writable, applies all
// the changes atomically (see Process).
func (self *DBM) ProcessMulti(keyProcPairs []KeyProcPair, writable bool) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	for {
		seen := map[string][]byte{}
		order := []string{}
		view := map[string][]byte{}
		changed := map[string]bool{}
		for _, pair := range keyProcPairs {
			k := ToString(pair.Key)
			if _, ok := view[k]; !ok {
				cur, st := self.current(k)
				if !st.IsOK() {
					return st
				}
				seen[k], view[k] = cur, cur
				order = append(order, k)
			}
			if v, change := outcome(pair.Proc([]byte(k), view[k]), view[k]); change {
				view[k], changed[k] = v, true
			}
		}
		if !writable || len(changed) == 0 {
			return NewStatus()
		}
		expected := make([]KeyValuePair, 0, len(order))
		desired := make([]KeyValuePair, 0, len(changed))
		for _, k := range order {
			expected = append(expected, KeyValuePair{[]byte(k), seen[k]})
			if changed[k] {
				desired = append(desired, KeyValuePair{[]byte(k), view[k]})
			}
		}
		if st := self.casMultiRaw(expected, desired); !st.Equals(StatusInfeasibleError) {
			return st
		}
	}
}

// ProcessFirst runs proc on the first record (in key order on ordered
// databases) and, when writable, applies its answer atomically (see
// Process); StatusNotFoundError when there is no record.
func (self *DBM) ProcessFirst(proc RecordProcessor, writable bool) *Status {
	_, _, st := self.processFirst(proc, writable)
	return st
}

// processFirst is ProcessFirst returning the record proc saw.
func (self *DBM) processFirst(proc RecordProcessor, writable bool) ([]byte, []byte, *Status) {
	if self.dbm == nil {
		return nil, nil, notOpen()
	}
	it := self.MakeIterator()
	defer it.Destruct()
	for {
		if st := it.First(); !st.IsOK() {
			return nil, nil, st
		}
		k, v, st := it.Get()
		if !st.IsOK() {
			return nil, nil, st
		}
		next, change := outcome(proc(k, v), v)
		if !writable || !change {
			return k, v, NewStatus()
		}
		st = self.casRaw(bytesArg(k), v, next)
		if !st.Equals(StatusInfeasibleError) {
			return k, v, st
		}
	}
}

// ProcessEach runs proc on every record and, when writable, applies each
// answer as it goes; proc is also called once before and once after the
// records with both key and value nil. Records added or removed meanwhile
// by others may or may not be visited.
func (self *DBM) ProcessEach(proc RecordProcessor, writable bool) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	proc(nil, nil)
	it := self.MakeIterator()
	defer it.Destruct()
	st := it.First()
	for st.IsOK() {
		k, v, got := it.Get()
		if !got.IsOK() {
			st = got
			break
		}
		next, change := outcome(proc(k, v), v)
		switch {
		case writable && change && next == nil:
			st = it.Remove()
		case writable && change:
			if st = it.Set(next); st.IsOK() {
				st = it.Next()
			}
		default:
			st = it.Next()
		}
	}
	proc(nil, nil)
	if st.Equals(StatusNotFoundError) {
		return NewStatus()
	}
	return st
}

// Rekey moves the record of oldKey to newKey, atomically (others see it
// under one key or the other); with copying, the old record stays.
// StatusNotFoundError when oldKey is absent, StatusDuplicationError when
// newKey exists and overwrite is false.
func (self *DBM) Rekey(oldKey interface{}, newKey interface{}, overwrite bool, copying bool) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	oldK, newK := ToByteArray(oldKey), ToByteArray(newKey)
	for {
		value, st := self.Get(oldK)
		if !st.IsOK() {
			return st
		}
		existing, st := self.current(newK)
		if !st.IsOK() {
			return st
		}
		if existing != nil && !overwrite {
			return NewStatus2(StatusDuplicationError, "the new key exists")
		}
		expected := []KeyValuePair{{oldK, value}, {newK, existing}}
		desired := []KeyValuePair{{newK, value}}
		if !copying && string(oldK) != string(newK) {
			desired = append(desired, KeyValuePair{oldK, nil})
		}
		if st := self.casMultiRaw(expected, desired); !st.Equals(StatusInfeasibleError) {
			return st
		}
	}
}

// PopFirst removes the first record (in key order on ordered databases)
// and returns it; StatusNotFoundError when there is none.
func (self *DBM) PopFirst() ([]byte, []byte, *Status) {
	k, v, st := self.processFirst(func([]byte, []byte) interface{} { return RemoveBytes }, true)
	if !st.IsOK() {
		return nil, nil, st
	}
	return k, v, st
}

// PopFirstStr is PopFirst with strings.
func (self *DBM) PopFirstStr() (string, string, *Status) {
	k, v, st := self.PopFirst()
	return string(k), string(v), st
}

// PushLast stores value under a key made of the time: 8 big-endian bytes
// of wtime (seconds; negative: now) in units of 10 ns, plus one for every
// key already taken. On an ordered database PopFirst then takes records
// in the order they were pushed.
func (self *DBM) PushLast(value interface{}, wtime float64) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	if wtime < 0 {
		wtime = float64(time.Now().UnixNano()) / 1e9
	}
	base := uint64(int64(wtime * 100000000))
	v := ToByteArray(value)
	for seq := uint64(0); ; seq++ {
		key := binary.BigEndian.AppendUint64(nil, base+seq)
		if st := self.Set(key, v, false); !st.Equals(StatusDuplicationError) {
			return st
		}
	}
}

// AppendMulti appends each value after delim to its record (or stores it
// where there is none), record by record; the first failure is returned.
func (self *DBM) AppendMulti(records map[string][]byte, delim interface{}) *Status {
	st := NewStatus()
	for k, v := range records {
		st.Join(self.Append(k, v, delim))
	}
	return st
}

// AppendMultiStr is AppendMulti with string values.
func (self *DBM) AppendMultiStr(records map[string]string, delim interface{}) *Status {
	st := NewStatus()
	for k, v := range records {
		st.Join(self.Append(k, v, delim))
	}
	return st
}
