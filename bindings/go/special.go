package memstored

import "unsafe"

// The special values of Tkrzw's Go binding. Each is recognised by its
// identity (the address of its bytes), not its content: a copy of AnyString
// is an ordinary string, so that no stored value can ever mean "any".
var (
	// RemoveBytes, returned by a RecordProcessor, removes the record.
	RemoveBytes = []byte("\x00[REMOVE]\x00")
	// RemoveString is RemoveBytes as a string.
	RemoveString = string([]byte("\x00[REMOVE]\x00"))
	// AnyBytes, as an expected value of CompareExchange, matches any
	// existing record; as a desired value, leaves the record as it is.
	AnyBytes = []byte("\x00[ANY]\x00")
	// AnyString is AnyBytes as a string.
	AnyString = string([]byte("\x00[ANY]\x00"))
	// NilString stands for "no record" where a string is expected:
	// CompareExchange(Multi)Str, CompareExchangeAndGetStr, a processor's
	// return value (keep the record).
	NilString = string([]byte("\x00[NIL]\x00"))
)

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

func sameString(a, b string) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b)
}

// IsRemoveData tells whether data is RemoveBytes or RemoveString itself.
func IsRemoveData(data interface{}) bool {
	switch d := data.(type) {
	case []byte:
		return IsRemoveBytes(d)
	case string:
		return IsRemoveString(d)
	}
	return false
}

// IsRemoveBytes tells whether data is RemoveBytes itself (not a copy).
func IsRemoveBytes(data []byte) bool { return sameBytes(data, RemoveBytes) }

// IsRemoveString tells whether data is RemoveString itself (not a copy).
func IsRemoveString(data string) bool { return sameString(data, RemoveString) }

// IsAnyData tells whether data is AnyBytes or AnyString itself.
func IsAnyData(data interface{}) bool {
	switch d := data.(type) {
	case []byte:
		return IsAnyBytes(d)
	case string:
		return IsAnyString(d)
	}
	return false
}

// IsAnyBytes tells whether data is AnyBytes itself (not a copy).
func IsAnyBytes(data []byte) bool { return sameBytes(data, AnyBytes) }

// IsAnyString tells whether data is AnyString itself (not a copy).
func IsAnyString(data string) bool { return sameString(data, AnyString) }

// IsNilData tells whether data means "no value": nil, a nil byte slice or
// NilString itself. The empty string and an empty slice are values.
func IsNilData(data interface{}) bool {
	switch d := data.(type) {
	case nil:
		return true
	case []byte:
		return d == nil
	case string:
		return IsNilString(d)
	}
	return false
}

// IsNilString tells whether data is NilString itself (not a copy).
func IsNilString(data string) bool { return sameString(data, NilString) }
