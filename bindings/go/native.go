package memstored

// The C side: memstored's C API (bindings/c) linked statically from cargo's
// target directory. Build it first: `cargo build --release -p memstored-c`
// (or put another directory holding libmemstored.a first in CGO_LDFLAGS as
// `-L DIR`, as test.sh does for the debug build).
//
// Every call below is one cgo call to a small C helper that runs the
// operation and reads the thread-local last status in the same C call: a
// goroutine may move to another thread between two cgo calls, so reading
// the status in a second call could see another goroutine's.

/*
#cgo CFLAGS: -I${SRCDIR}/../c/include
#cgo LDFLAGS: -L${SRCDIR}/../../target/release -l:libmemstored.a -lgcc_s -lutil -lrt -lpthread -lm -ldl
#include "ms_helpers.h"
#include <stdlib.h>
// The hot calls neither keep their pointers nor call back into Go: a get's
// value buffer then stays on the goroutine's stack instead of escaping to
// the heap on every call.
#cgo noescape ms_get_to
#cgo nocallback ms_get_to
#cgo noescape ms_set
#cgo nocallback ms_set
*/
import "C"

import (
	"unsafe"
)

// statusOf turns a helper's code and message into a Status, releasing the message.
func statusOf(code C.int32_t, msg *C.char) *Status {
	s := &Status{code: StatusCode(code)}
	if msg != nil {
		s.message = C.GoString(msg)
		C.free(unsafe.Pointer(msg))
	}
	return s
}

// arg is a key or value handed to C without copying: a pointer into the Go
// string or slice (cgo keeps it alive and unmoved for the call) and its size.
type arg struct {
	ptr  *C.char
	size C.int32_t
}

// argOf converts a key or value as the API takes it (string, []byte,
// number...). Strings and byte slices are not copied.
func argOf(x interface{}) arg {
	switch v := x.(type) {
	case string:
		return strArg(v)
	case []byte:
		return bytesArg(v)
	}
	return bytesArg(ToByteArray(x))
}

func strArg(s string) arg {
	if len(s) == 0 {
		return arg{}
	}
	return arg{(*C.char)(unsafe.Pointer(unsafe.StringData(s))), C.int32_t(len(s))}
}

func bytesArg(b []byte) arg {
	if len(b) == 0 {
		return arg{}
	}
	return arg{(*C.char)(unsafe.Pointer(&b[0])), C.int32_t(len(b))}
}

// packed is several byte strings in one buffer with their sizes, for the
// multi-record calls (the C helper builds its array over them).
type packed struct {
	buf   []byte
	sizes []C.int32_t
}

func (p *packed) add(b []byte) {
	p.buf = append(p.buf, b...)
	p.sizes = append(p.sizes, C.int32_t(len(b)))
}

func (p *packed) addStr(s string) {
	p.buf = append(p.buf, s...)
	p.sizes = append(p.sizes, C.int32_t(len(s)))
}

// addNil records a NULL value (compare-exchange: absent / remove).
func (p *packed) addNil() { p.sizes = append(p.sizes, -1) }

func (p *packed) bufPtr() *C.char {
	if len(p.buf) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&p.buf[0]))
}

func (p *packed) sizesPtr() *C.int32_t {
	if len(p.sizes) == 0 {
		return nil
	}
	return &p.sizes[0]
}

// takeBytes copies a returned value into Go memory and releases it.
func takeBytes(ptr *C.char, size C.int32_t) []byte {
	if ptr == nil {
		return nil
	}
	b := C.GoBytes(unsafe.Pointer(ptr), C.int(size))
	C.memstored_free(unsafe.Pointer(ptr))
	return b
}

// takeString is takeBytes for a string (one copy).
func takeString(ptr *C.char, size C.int32_t) string {
	if ptr == nil {
		return ""
	}
	s := C.GoStringN(ptr, C.int(size))
	C.memstored_free(unsafe.Pointer(ptr))
	return s
}

// goBytes copies n bytes of C memory; the empty value is a non-nil empty slice.
func goBytes(ptr *C.char, n C.int32_t) []byte {
	return C.GoBytes(unsafe.Pointer(ptr), C.int(n))
}

// takeStrs copies a returned array of n strings into Go strings and
// releases it; never nil.
func takeStrs(ptr *C.char, n C.int32_t) []string {
	out := []string{}
	if ptr == nil {
		return out
	}
	for _, s := range unsafe.Slice((*C.MemstoredStr)(unsafe.Pointer(ptr)), int(n)) {
		out = append(out, C.GoStringN(s.ptr, C.int(s.size)))
	}
	C.memstored_free(unsafe.Pointer(ptr))
	return out
}
