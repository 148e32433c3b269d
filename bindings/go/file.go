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

// File is Tkrzw's File: a plain file read and written at offsets, safe for
// concurrent use. DBM.ExportToFlatRecords and ImportFromFlatRecords use
// one, and Search finds lines in one. It is the C API's memstored_file_*
// (the engine's file layer: a writable open never follows a symlink).
type File struct {
	// mu guards f: calls hold it shared, Open and Close exclusively, so
	// that no call uses a handle Close has released.
	mu sync.RWMutex
	f  *C.MemstoredFile
}

// NewFile makes a file handle, not yet open.
func NewFile() *File { return &File{} }

// Destruct closes the file if it is open.
func (self *File) Destruct() {
	if self.IsOpen() {
		self.Close()
	}
}

// IsOpen tells whether the file is open.
func (self *File) IsOpen() bool {
	self.mu.RLock()
	defer self.mu.RUnlock()
	return self.f != nil
}

// String describes the file.
func (self *File) String() string {
	path, st := self.GetPath()
	if !st.IsOK() {
		return "#<memstored.File:unopened>"
	}
	size, _ := self.GetSize()
	return fmt.Sprintf("#<memstored.File:%s:%d>", path, size)
}

func notOpenFile() *Status { return NewStatus2(StatusPreconditionError, "not opened file") }

// with runs call on the open handle, or answers StatusPreconditionError.
func (self *File) with(call func(f *C.MemstoredFile) C.ms_res) *Status {
	self.mu.RLock()
	defer self.mu.RUnlock()
	if self.f == nil {
		return notOpenFile()
	}
	r := call(self.f)
	return statusOf(r.code, r.msg)
}

// Open opens a file. params (a map or "k=v,..." string) may set
// truncate, no_create and sync_hard to "true", and block_size with
// access_options naming "padding" (the size is rounded up to a multiple of
// block_size on close); Tkrzw's no_wait, no_lock, file and alloc_*
// parameters are accepted and have no effect.
func (self *File) Open(path string, writable bool, params interface{}) *Status {
	joined, bad := joinParams(params)
	if bad != nil {
		return bad
	}
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.f != nil {
		return NewStatus2(StatusPreconditionError, "opened file")
	}
	cpath, cparams := C.CString(path), C.CString(joined)
	defer C.free(unsafe.Pointer(cpath))
	defer C.free(unsafe.Pointer(cparams))
	r := C.ms_file_open(cpath, C.bool(writable), cparams, &self.f)
	return statusOf(r.code, r.msg)
}

// Close closes the file; the handle can be opened again.
func (self *File) Close() *Status {
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.f == nil {
		return notOpenFile()
	}
	r := C.ms_file_close(self.f)
	self.f = nil
	return statusOf(r.code, r.msg)
}

// Read reads size bytes at off; StatusInfeasibleError when the file ends
// before them.
func (self *File) Read(off int64, size int64) ([]byte, *Status) {
	if off < 0 || size < 0 {
		return nil, NewStatus2(StatusInvalidArgumentError, "negative offset or size")
	}
	buf := make([]byte, size)
	st := self.with(func(f *C.MemstoredFile) C.ms_res {
		return C.ms_file_read(f, C.int64_t(off), bytesPtr(buf), C.int64_t(size))
	})
	if !st.IsOK() {
		return nil, st
	}
	return buf, st
}

// bytesPtr is a pointer to b's bytes for the call (nil when empty).
func bytesPtr(b []byte) *C.char {
	if len(b) == 0 {
		return nil
	}
	return (*C.char)(unsafe.Pointer(&b[0]))
}

// ReadStr is Read returning a string.
func (self *File) ReadStr(off int64, size int64) (string, *Status) {
	b, st := self.Read(off, size)
	return string(b), st
}

// Write writes data at off, extending the file as needed.
func (self *File) Write(off int64, data interface{}) *Status {
	b := ToByteArray(data)
	return self.with(func(f *C.MemstoredFile) C.ms_res {
		return C.ms_file_write(f, C.int64_t(off), bytesPtr(b), C.int64_t(len(b)))
	})
}

// Append writes data at the end and returns the offset it was written at.
func (self *File) Append(data interface{}) (int64, *Status) {
	b := ToByteArray(data)
	var off C.int64_t = -1
	st := self.with(func(f *C.MemstoredFile) C.ms_res {
		return C.ms_file_append(f, bytesPtr(b), C.int64_t(len(b)), &off)
	})
	if !st.IsOK() {
		return -1, st
	}
	return int64(off), st
}

// Truncate sets the file's size.
func (self *File) Truncate(size int64) *Status {
	return self.with(func(f *C.MemstoredFile) C.ms_res { return C.ms_file_truncate(f, C.int64_t(size)) })
}

// Synchronize writes the file's data to the device when hard (the whole
// file: off and size are accepted for Tkrzw's signature); without hard
// there is nothing to do, the data being in the OS already.
func (self *File) Synchronize(hard bool, off int64, size int64) *Status {
	return self.with(func(f *C.MemstoredFile) C.ms_res { return C.ms_file_synchronize(f, C.bool(hard)) })
}

// GetSize returns the file's size.
func (self *File) GetSize() (int64, *Status) {
	var size C.int64_t = -1
	st := self.with(func(f *C.MemstoredFile) C.ms_res { return C.ms_file_get_size(f, &size) })
	return int64(size), st
}

// GetPath returns the path the file was opened with.
func (self *File) GetPath() (string, *Status) {
	var path string
	st := self.with(func(f *C.MemstoredFile) C.ms_res {
		r := C.ms_file_get_path(f)
		path = takeString(r.ptr, r.size)
		return r
	})
	return path, st
}

// Search returns the lines (without their newline) matching a pattern:
// mode is "contain", "containcase", "containword", "containcaseword",
// those four with "*" (the pattern: several, one per line, any matching),
// "begin", "end", "regex", "edit" or "editbin" (the capacity lines nearest
// by edit distance, in characters or bytes). capacity 0 means no limit. A
// bad mode or regex gives an empty result.
func (self *File) Search(mode string, pattern string, capacity int) []string {
	out, _ := self.search(mode, pattern, capacity)
	return out
}

// search is Search with the status (a bad mode or regex fails).
func (self *File) search(mode, pattern string, capacity int) ([]string, *Status) {
	cmode := C.CString(mode)
	defer C.free(unsafe.Pointer(cmode))
	p := strArg(pattern)
	out := []string{}
	st := self.with(func(f *C.MemstoredFile) C.ms_res {
		r := C.ms_file_search(f, cmode, p.ptr, p.size, C.int32_t(capacity))
		out = takeStrs(r.ptr, r.size)
		return r
	})
	return out, st
}
