package memstored

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// File is Tkrzw's File: a plain file read and written at offsets, safe for
// concurrent use. DBM.ExportToFlatRecords and ImportFromFlatRecords use
// one, and Search finds lines in one.
type File struct {
	mu   sync.Mutex // guards f, path, size
	f    *os.File
	path string
	size int64
	hard bool // sync_hard: every write reaches the device
}

// NewFile makes a file handle, not yet open.
func NewFile() *File { return &File{} }

// Destruct closes the file if it is open.
func (self *File) Destruct() {
	if self.f != nil {
		self.Close()
	}
}

// String describes the file.
func (self *File) String() string {
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.f == nil {
		return "#<memstored.File:unopened>"
	}
	return fmt.Sprintf("#<memstored.File:%s:%d>", self.path, self.size)
}

func notOpenFile() *Status { return NewStatus2(StatusPreconditionError, "not opened file") }

func ioStatus(err error) *Status {
	if err == nil {
		return NewStatus()
	}
	if os.IsPermission(err) {
		return NewStatus2(StatusPermissionError, err.Error())
	}
	if os.IsNotExist(err) {
		return NewStatus2(StatusNotFoundError, err.Error())
	}
	return NewStatus2(StatusSystemError, err.Error())
}

// Open opens a file. params (a map or "k=v,..." string) may set
// truncate, no_create and sync_hard to "true"; Tkrzw's no_wait, no_lock
// and file class parameters are accepted and have no effect.
func (self *File) Open(path string, writable bool, params interface{}) *Status {
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.f != nil {
		return NewStatus2(StatusPreconditionError, "opened file")
	}
	joined, bad := joinParams(params)
	if bad != nil {
		return bad
	}
	p := ParseParams(joined)
	flags := os.O_RDONLY
	if writable {
		flags = os.O_RDWR
		if p["no_create"] != "true" {
			flags |= os.O_CREATE
		}
		if p["truncate"] == "true" {
			flags |= os.O_TRUNC
		}
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return ioStatus(err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return ioStatus(err)
	}
	self.f, self.path, self.size, self.hard = f, path, info.Size(), p["sync_hard"] == "true"
	return NewStatus()
}

// Close closes the file; the handle can be opened again.
func (self *File) Close() *Status {
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.f == nil {
		return notOpenFile()
	}
	var err error
	if self.hard {
		err = self.f.Sync()
	}
	if cerr := self.f.Close(); err == nil {
		err = cerr
	}
	self.f = nil
	return ioStatus(err)
}

// open returns the os.File, or nil when the handle is not open.
func (self *File) open() *os.File {
	self.mu.Lock()
	defer self.mu.Unlock()
	return self.f
}

// Read reads size bytes at off; StatusInfeasibleError when the file ends
// before them.
func (self *File) Read(off int64, size int64) ([]byte, *Status) {
	f := self.open()
	if f == nil {
		return nil, notOpenFile()
	}
	if off < 0 || size < 0 {
		return nil, NewStatus2(StatusInvalidArgumentError, "negative offset or size")
	}
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, off)
	if err == io.EOF || (err == nil && int64(n) < size) {
		return nil, NewStatus2(StatusInfeasibleError, "excessive size")
	}
	if err != nil {
		return nil, ioStatus(err)
	}
	return buf, NewStatus()
}

// ReadStr is Read returning a string.
func (self *File) ReadStr(off int64, size int64) (string, *Status) {
	b, st := self.Read(off, size)
	return string(b), st
}

// Write writes data at off, extending the file as needed.
func (self *File) Write(off int64, data interface{}) *Status {
	b := ToByteArray(data)
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.f == nil {
		return notOpenFile()
	}
	if off < 0 {
		return NewStatus2(StatusInvalidArgumentError, "negative offset")
	}
	if _, err := self.f.WriteAt(b, off); err != nil {
		return ioStatus(err)
	}
	self.size = max(self.size, off+int64(len(b)))
	return self.maybeSync()
}

func (self *File) maybeSync() *Status {
	if self.hard {
		return ioStatus(self.f.Sync())
	}
	return NewStatus()
}

// Append writes data at the end and returns the offset it was written at.
func (self *File) Append(data interface{}) (int64, *Status) {
	b := ToByteArray(data)
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.f == nil {
		return -1, notOpenFile()
	}
	off := self.size
	if _, err := self.f.WriteAt(b, off); err != nil {
		return -1, ioStatus(err)
	}
	self.size += int64(len(b))
	return off, self.maybeSync()
}

// Truncate sets the file's size.
func (self *File) Truncate(size int64) *Status {
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.f == nil {
		return notOpenFile()
	}
	if err := self.f.Truncate(size); err != nil {
		return ioStatus(err)
	}
	self.size = size
	return self.maybeSync()
}

// Synchronize writes the file's data to the device when hard (the whole
// file: off and size are accepted for Tkrzw's signature); without hard
// there is nothing to do, the data being in the OS already.
func (self *File) Synchronize(hard bool, off int64, size int64) *Status {
	f := self.open()
	if f == nil {
		return notOpenFile()
	}
	if hard {
		return ioStatus(f.Sync())
	}
	return NewStatus()
}

// GetSize returns the file's size.
func (self *File) GetSize() (int64, *Status) {
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.f == nil {
		return -1, notOpenFile()
	}
	return self.size, NewStatus()
}

// GetPath returns the path the file was opened with.
func (self *File) GetPath() (string, *Status) {
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.f == nil {
		return "", notOpenFile()
	}
	return self.path, NewStatus()
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

// lines reads the whole file as lines without their newlines.
func (self *File) lines() ([]string, *Status) {
	f := self.open()
	if f == nil {
		return nil, notOpenFile()
	}
	size, st := self.GetSize()
	if !st.IsOK() {
		return nil, st
	}
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, 0); err != nil && err != io.EOF {
		return nil, ioStatus(err)
	}
	return splitLines(string(buf)), NewStatus()
}
