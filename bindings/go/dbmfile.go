package memstored

/*
#include "ms_helpers.h"
#include <stdlib.h>
*/
import "C"

import (
	"unsafe"
)

// The file-level calls of a DBM: its path, size and time, copies, export
// and import (Tkrzw's flat records and key lines), restoration.

// inMemory tells whether an Open path names an in-memory database.
func inMemory(path string) bool { return path == "*" || path == "+" || path == "" }

// GetFileSize returns the size of the database's files in bytes (an
// on-memory class kept in a file: the file as last saved; in memory, the
// bytes its records take).
func (self *DBM) GetFileSize() (int64, *Status) {
	if self.dbm == nil {
		return -1, notOpen()
	}
	var n C.int64_t
	r := C.ms_get_file_size(self.dbm, &n)
	return int64(n), statusOf(r.code, r.msg)
}

// GetFileSizeSimple is GetFileSize returning -1 on failure.
func (self *DBM) GetFileSizeSimple() int64 {
	n, _ := self.GetFileSize()
	return n
}

// GetFilePath returns the path the database was opened with ("" in memory).
func (self *DBM) GetFilePath() (string, *Status) {
	if self.dbm == nil {
		return "", notOpen()
	}
	if inMemory(self.path) {
		return "", NewStatus()
	}
	return self.path, NewStatus()
}

// GetFilePathSimple is GetFilePath returning "" on failure.
func (self *DBM) GetFilePathSimple() string {
	p, _ := self.GetFilePath()
	return p
}

// GetTimestamp returns the time of the open or the last Synchronize, in
// seconds since the epoch, as Tkrzw's engines keep it.
func (self *DBM) GetTimestamp() (float64, *Status) {
	if self.dbm == nil {
		return -1, notOpen()
	}
	var out C.double
	r := C.ms_get_timestamp(self.dbm, &out)
	return float64(out), statusOf(r.code, r.msg)
}

// GetTimestampSimple is GetTimestamp returning -1 on failure.
func (self *DBM) GetTimestampSimple() float64 {
	t, _ := self.GetTimestamp()
	return t
}

// IsHealthy tells whether the database is open and usable.
func (self *DBM) IsHealthy() bool {
	if self.dbm == nil {
		return false
	}
	_, st := self.Count()
	return st.IsOK()
}

// Export copies every record into destDBM (overwriting its records of the
// same keys).
func (self *DBM) Export(destDBM *DBM) *Status {
	if self.dbm == nil || destDBM.dbm == nil {
		return notOpen()
	}
	r := C.ms_export(self.dbm, destDBM.dbm)
	return statusOf(r.code, r.msg)
}

// CopyFileData writes a consistent copy of the database's files at
// destPath (a sharded database's shards at destPath's shard names), which
// opens as the database does, while others keep using it.
// StatusPreconditionError for an in-memory database.
func (self *DBM) CopyFileData(destPath string, syncHard bool) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	dest := C.CString(destPath)
	defer C.free(unsafe.Pointer(dest))
	r := C.ms_copy_file_data(self.dbm, dest, C.bool(syncHard))
	return statusOf(r.code, r.msg)
}

// RestoreDatabase salvages the intact records of a damaged database at
// oldPath into a new one at newPath. className is "HashDBM", "TreeDBM" or
// "" (by the path's extension); endOffset other than 0 or negative is
// StatusNotImplementedError; cipherKey is not used (memstored does not
// encrypt).
func RestoreDatabase(oldPath string, newPath string, className string, endOffset int64,
	cipherKey string) *Status {
	o, n, c := C.CString(oldPath), C.CString(newPath), C.CString(className)
	defer C.free(unsafe.Pointer(o))
	defer C.free(unsafe.Pointer(n))
	defer C.free(unsafe.Pointer(c))
	r := C.ms_restore_database(o, n, c, C.int64_t(endOffset))
	return statusOf(r.code, r.msg)
}

// withFile runs one of the C calls between a database and a File
// (MS_EXPORT_FLAT, MS_IMPORT_FLAT, MS_EXPORT_KEYS).
func (self *DBM) withFile(file *File, op C.int) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	return file.with(func(f *C.MemstoredFile) C.ms_res { return C.ms_flat_records(self.dbm, f, op) })
}

// ExportToFlatRecords writes every record to destFile (emptied first) in
// Tkrzw's flat-record format: the key, then the value, each as the byte
// 0xFF, its size as a variable-length number, and its bytes.
func (self *DBM) ExportToFlatRecords(destFile *File) *Status {
	return self.withFile(destFile, C.MS_EXPORT_FLAT)
}

// ImportFromFlatRecords stores the records of a file in Tkrzw's
// flat-record format (see ExportToFlatRecords), overwriting; metadata
// records are skipped. StatusBrokenDataError on a malformed file.
func (self *DBM) ImportFromFlatRecords(srcFile *File) *Status {
	return self.withFile(srcFile, C.MS_IMPORT_FLAT)
}

// ExportKeysAsLines writes every key, one a line, to destFile (emptied
// first).
func (self *DBM) ExportKeysAsLines(destFile *File) *Status {
	return self.withFile(destFile, C.MS_EXPORT_KEYS)
}
