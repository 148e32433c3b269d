package memstored

/*
#include "ms_helpers.h"
#include <stdlib.h>
*/
import "C"

import (
	"strconv"
	"unsafe"
)

// The file-level calls of a DBM: its path, size and time, copies, export
// and import (Tkrzw's flat records and key lines), restoration.

// inMemory tells whether an Open path names an in-memory database.
func inMemory(path string) bool { return path == "*" || path == "+" || path == "" }

// GetFileSize returns the size of the database's files in bytes.
func (self *DBM) GetFileSize() (int64, *Status) {
	if self.dbm == nil {
		return -1, notOpen()
	}
	n, err := strconv.ParseInt(self.Inspect()["file_size"], 10, 64)
	if err != nil {
		return -1, NewStatus2(StatusNotImplementedError, "GetFileSize: no file size")
	}
	return n, NewStatus()
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

// eachRecord hands every record to fn until fn fails, whose failure it
// returns.
func (self *DBM) eachRecord(fn func(k, v []byte) *Status) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	it := self.MakeIterator()
	defer it.Destruct()
	st := it.First()
	for st.IsOK() {
		var k, v []byte
		if k, v, st = it.Step(); st.IsOK() {
			st = fn(k, v)
		}
	}
	if st.Equals(StatusNotFoundError) {
		return NewStatus()
	}
	return st
}

// Export copies every record into destDBM (overwriting its records of the
// same keys).
func (self *DBM) Export(destDBM *DBM) *Status {
	return self.eachRecord(func(k, v []byte) *Status { return destDBM.Set(k, v, true) })
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

// flatRecordMagic starts each of Tkrzw's flat records (0xFE: metadata).
const (
	flatRecordMagic   = 0xFF
	flatMetadataMagic = 0xFE
)

// appendVarNum appends Tkrzw's variable-length number: 7 bits a byte, the
// most significant first, every byte but the last with its top bit set.
func appendVarNum(buf []byte, n uint64) []byte {
	var groups [10]byte
	i := len(groups) - 1
	groups[i] = byte(n & 0x7f)
	for n >>= 7; n > 0; n >>= 7 {
		i--
		groups[i] = byte(n&0x7f) | 0x80
	}
	return append(buf, groups[i:]...)
}

// readVarNum reads appendVarNum's number; ok false when data ends first or
// the number overflows.
func readVarNum(data []byte) (n uint64, size int, ok bool) {
	for i, b := range data {
		if i >= 10 {
			return 0, 0, false
		}
		n = n<<7 | uint64(b&0x7f)
		if b&0x80 == 0 {
			return n, i + 1, true
		}
	}
	return 0, 0, false
}

func appendFlatRecord(buf, data []byte) []byte {
	buf = append(buf, flatRecordMagic)
	return append(appendVarNum(buf, uint64(len(data))), data...)
}

// ExportToFlatRecords writes every record to destFile (emptied first) in
// Tkrzw's flat-record format: the key, then the value, each as the byte
// 0xFF, its size as a variable-length number, and its bytes.
func (self *DBM) ExportToFlatRecords(destFile *File) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	if st := destFile.Truncate(0); !st.IsOK() {
		return st
	}
	var buf []byte
	return self.eachRecord(func(k, v []byte) *Status {
		buf = appendFlatRecord(appendFlatRecord(buf[:0], k), v)
		_, st := destFile.Append(buf)
		return st
	})
}

// ImportFromFlatRecords stores the records of a file in Tkrzw's
// flat-record format (see ExportToFlatRecords), overwriting; metadata
// records are skipped. StatusBrokenDataError on a malformed file.
func (self *DBM) ImportFromFlatRecords(srcFile *File) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	size, st := srcFile.GetSize()
	if !st.IsOK() {
		return st
	}
	data, st := srcFile.Read(0, size)
	if !st.IsOK() {
		return st
	}
	var key []byte
	haveKey := false
	for len(data) > 0 {
		magic := data[0]
		n, step, ok := readVarNum(data[1:])
		if (magic != flatRecordMagic && magic != flatMetadataMagic) || !ok ||
			n > uint64(len(data)-1-step) {
			return NewStatus2(StatusBrokenDataError, "invalid flat record")
		}
		body := data[1+step : 1+step+int(n)]
		data = data[1+step+int(n):]
		switch {
		case magic == flatMetadataMagic && !haveKey:
			continue
		case magic == flatMetadataMagic:
			return NewStatus2(StatusBrokenDataError, "invalid metadata position")
		case !haveKey:
			key, haveKey = body, true
		default:
			if st := self.Set(key, body, true); !st.IsOK() {
				return st
			}
			haveKey = false
		}
	}
	if haveKey {
		return NewStatus2(StatusBrokenDataError, "odd number of records")
	}
	return NewStatus()
}

// ExportKeysAsLines writes every key, one a line, to destFile (emptied
// first).
func (self *DBM) ExportKeysAsLines(destFile *File) *Status {
	if self.dbm == nil {
		return notOpen()
	}
	if st := destFile.Truncate(0); !st.IsOK() {
		return st
	}
	return self.eachRecord(func(k, _ []byte) *Status {
		_, st := destFile.Append(append(k, '\n'))
		return st
	})
}
