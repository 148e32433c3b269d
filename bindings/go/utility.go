package memstored

import (
	"bufio"
	"encoding/binary"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Version is the library's version (the workspace's, kept in step with
// Cargo.toml by TestVersionMatchesCargo).
var Version = "0.2.0"

// OSName is the operating system's name as Tkrzw spells it ("Linux", ...).
var OSName = osName(runtime.GOOS)

// PageSize is the memory page size in bytes.
var PageSize = os.Getpagesize()

// Int64Min and Int64Max bound int64; Increment by Int64Min reads the value.
var (
	Int64Min int64 = math.MinInt64
	Int64Max int64 = math.MaxInt64
)

func osName(goos string) string {
	switch goos {
	case "linux":
		return "Linux"
	case "darwin":
		return "macOS"
	case "windows":
		return "Windows"
	case "freebsd":
		return "FreeBSD"
	}
	return goos
}

// meminfoBytes reads a "Name:   123 kB" line of a /proc file as bytes,
// or -1 when the file or the line is missing (not Linux).
func meminfoBytes(path, name string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		label, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || label != name {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return -1
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return -1
		}
		if len(fields) > 1 && fields[1] == "kB" {
			n *= 1024
		}
		return n
	}
	return -1
}

// GetMemoryCapacity returns the machine's memory in bytes (-1 if unknown).
func GetMemoryCapacity() int64 { return meminfoBytes("/proc/meminfo", "MemTotal") }

// GetMemoryUsage returns the process's resident memory in bytes (-1 if
// unknown).
func GetMemoryUsage() int64 { return meminfoBytes("/proc/self/status", "VmRSS") }

// murmur64 is MurmurHash64A, the hash Tkrzw's PrimaryHash is built on.
func murmur64(data []byte, seed uint64) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := seed ^ (uint64(len(data)) * m)
	for len(data) >= 8 {
		k := binary.LittleEndian.Uint64(data) * m
		k ^= k >> r
		h = (h * m) ^ (k * m)
		data = data[8:]
	}
	if len(data) > 0 {
		var tail uint64
		for i := len(data) - 1; i >= 0; i-- {
			tail = tail<<8 | uint64(data[i])
		}
		h = (h ^ tail) * m
	}
	h ^= h >> r
	h *= m
	return h ^ h>>r
}

// fnv64 is Tkrzw's FNV-style hash (its own prime), under SecondaryHash.
func fnv64(data []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, b := range data {
		h = (h ^ uint64(b)) * 109951162811
	}
	return h
}

// foldHash mixes a 64-bit hash's halves for moduli that fit 32 bits, as
// Tkrzw does before taking the remainder.
func foldHash(h, modulus uint64) uint64 {
	if modulus <= math.MaxUint32 {
		h = ((h&0xffff000000000000)>>48 | (h&0x0000ffff00000000)>>16) ^
			((h&0x000000000000ffff)<<16 | (h&0x00000000ffff0000)>>16)
	}
	return h % modulus
}

// PrimaryHash is Tkrzw's bucket hash of data, modulo numBuckets.
func PrimaryHash(data []byte, numBuckets uint64) uint64 {
	return foldHash(murmur64(data, 19780211), numBuckets)
}

// SecondaryHash is Tkrzw's shard hash of data, modulo numShards.
func SecondaryHash(data []byte, numShards uint64) uint64 {
	return foldHash(fnv64(data), numShards)
}

// EditDistanceLev is the Levenshtein distance of a and b, counted in
// characters when utf is true, else in bytes.
func EditDistanceLev(a string, b string, utf bool) int {
	if utf {
		return levenshtein([]rune(a), []rune(b))
	}
	return levenshtein([]byte(a), []byte(b))
}

func levenshtein[T comparable](a, b []T) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		diag := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			next := min(row[j]+1, row[j-1]+1, diag+cost)
			diag, row[j] = row[j], next
		}
	}
	return row[len(b)]
}

// SerializeInt encodes num as 8 big-endian bytes (Tkrzw's IntToStrBigEndian).
func SerializeInt(num int64) []byte { return serialize_int(num) }

// DeserializeInt decodes big-endian bytes (up to 8) into an integer.
func DeserializeInt(data []byte) int64 { return deserialize_int(data) }

// SerializeFloat encodes num as its 8 big-endian IEEE-754 bytes.
func SerializeFloat(num float64) []byte { return serialize_float(num) }

// DeserializeFloat decodes 8 big-endian IEEE-754 bytes (else 0).
func DeserializeFloat(data []byte) float64 { return deserialize_float(data) }

// The lower-case names are tkrzw-go's own, which its tests call.

func serialize_int(num int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(num)) }

func deserialize_int(data []byte) int64 {
	var n uint64
	for _, b := range data[:min(len(data), 8)] {
		n = n<<8 | uint64(b)
	}
	return int64(n)
}

func serialize_float(num float64) []byte {
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(num))
}

func deserialize_float(data []byte) float64 {
	if len(data) != 8 {
		return 0
	}
	return math.Float64frombits(binary.BigEndian.Uint64(data))
}
