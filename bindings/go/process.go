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
