package memstored

/*
#include "ms_helpers.h"
#include <stdlib.h>
*/
import "C"

import (
	"runtime/cgo"
	"unsafe"
)

// Record processors run from inside the library (memstored_dbm_process_*),
// the record locked meanwhile: each processor is called once per record,
// and its answer is applied atomically, as in Tkrzw. A processor must not
// call the same database (its record is locked: Tkrzw deadlocks too).

// procCall is one processor's state during one C call: the C copies of
// its answers, released when the call returns, and a panic to re-raise.
type procCall struct {
	proc   RecordProcessor
	copies []unsafe.Pointer
	panic  interface{}
	failed bool
}

func (pc *procCall) release() {
	for _, p := range pc.copies {
		C.free(p)
	}
	pc.copies = nil
}

// msGoRecordProc is the C API's record processor: arg is a cgo.Handle of a
// *procCall. A NULL key (ProcessEach's calls around the records) is given
// to the processor as a nil key and value.
//
//export msGoRecordProc
func msGoRecordProc(arg unsafe.Pointer, key *C.char, keySize C.int32_t, value *C.char,
	valueSize C.int32_t, outSize *C.int32_t) *C.char {
	pc := cgo.Handle(uintptr(arg)).Value().(*procCall)
	noop := &C.MEMSTORED_REC_PROC_NOOP[0]
	if pc.failed {
		return noop
	}
	var k, v []byte
	if key != nil {
		k = C.GoBytes(unsafe.Pointer(key), C.int(keySize))
	}
	if value != nil && valueSize >= 0 {
		v = C.GoBytes(unsafe.Pointer(value), C.int(valueSize))
	}
	var rv interface{}
	func() {
		// A panic must not unwind through the library's frames (its locks
		// would stay held): it is kept and raised again after the call.
		defer func() {
			if p := recover(); p != nil {
				pc.panic, pc.failed = p, true
			}
		}()
		rv = pc.proc(k, v)
	}()
	switch {
	case pc.failed || IsNilData(rv):
		return noop
	case IsRemoveData(rv):
		return &C.MEMSTORED_REC_PROC_REMOVE[0]
	}
	b := ToByteArray(rv)
	// Never NULL (that would mean "keep"), even for an empty value.
	c := C.malloc(C.size_t(len(b) + 1))
	if len(b) > 0 {
		copy(unsafe.Slice((*byte)(c), len(b)), b)
	}
	pc.copies = append(pc.copies, c)
	*outSize = C.int32_t(len(b))
	return (*C.char)(c)
}

// withProcs runs call with a handle for each processor, then releases
// them and re-raises a processor's panic.
func withProcs(procs []RecordProcessor, call func(handles []C.uintptr_t) C.ms_res) *Status {
	calls := make([]*procCall, len(procs))
	handles := make([]C.uintptr_t, len(procs))
	for i, p := range procs {
		calls[i] = &procCall{proc: p}
		h := cgo.NewHandle(calls[i])
		defer h.Delete()
		handles[i] = C.uintptr_t(h)
	}
	r := call(handles)
	st := statusOf(r.code, r.msg)
	for _, pc := range calls {
		pc.release()
	}
	for _, pc := range calls {
		if pc.failed {
			panic(pc.panic)
		}
	}
	return st
}

// Process runs proc on the record of key (its value, or nil when absent)
// and, when writable, applies what proc returns (see RecordProcessor),
// atomically: the record is locked while proc runs.
func (self *DBM) Process(key interface{}, proc RecordProcessor, writable bool) *Status {
	return self.ProcessMulti([]KeyProcPair{{key, proc}}, writable)
}

// ProcessMulti runs each processor on its record in order (a key given
// twice sees the first processor's result) and, when writable, applies all
// the answers atomically: every record involved is locked throughout.
func (self *DBM) ProcessMulti(keyProcPairs []KeyProcPair, writable bool) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	p := &packed{}
	procs := make([]RecordProcessor, len(keyProcPairs))
	for i, pair := range keyProcPairs {
		p.add(ToByteArray(pair.Key))
		procs[i] = pair.Proc
	}
	return withProcs(procs, func(h []C.uintptr_t) C.ms_res {
		var hp *C.uintptr_t
		if len(h) > 0 {
			hp = &h[0]
		}
		return C.ms_process_multi(self.dbm, p.bufPtr(), p.sizesPtr(), hp, C.int32_t(len(h)), C.bool(writable))
	})
}

// ProcessFirst runs proc on the first record (in key order on ordered
// databases) and, when writable, applies its answer atomically;
// StatusNotFoundError when there is no record.
func (self *DBM) ProcessFirst(proc RecordProcessor, writable bool) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	return withProcs([]RecordProcessor{proc}, func(h []C.uintptr_t) C.ms_res {
		return C.ms_process_first(self.dbm, h[0], C.bool(writable))
	})
}

// ProcessEach runs proc on every record and, when writable, applies each
// answer, record by record (each atomically); proc is also called once
// before and once after the records with both key and value nil.
func (self *DBM) ProcessEach(proc RecordProcessor, writable bool) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	return withProcs([]RecordProcessor{proc}, func(h []C.uintptr_t) C.ms_res {
		return C.ms_process_each(self.dbm, h[0], C.bool(writable))
	})
}

// PopFirst removes the first record (in key order on ordered databases)
// and returns it; StatusNotFoundError when there is none.
func (self *DBM) PopFirst() ([]byte, []byte, *Status) {
	var k, v []byte
	st := self.ProcessFirst(func(key, value []byte) interface{} {
		k, v = key, value
		return RemoveBytes
	}, true)
	if !st.IsOK() {
		return nil, nil, st
	}
	return k, v, st
}
