package memstored

import (
	"fmt"
	"sync"
)

// AsyncDBM runs a DBM's calls on a pool of worker goroutines, each call
// answering at once with a Future. Calls start in the order made. Destruct
// it (which waits for the calls made) before closing the DBM.
type AsyncDBM struct {
	dbm     *DBM
	mu      sync.Mutex // guards queue and closed
	ready   *sync.Cond
	queue   []func()
	closed  bool
	workers sync.WaitGroup
}

// NewAsyncDBM makes an adapter over an open DBM with numWorkerThreads
// workers (at least one); nil when the DBM is not open.
func NewAsyncDBM(dbm *DBM, numWorkerThreads int) *AsyncDBM {
	if dbm == nil || !dbm.IsOpen() {
		return nil
	}
	a := &AsyncDBM{dbm: dbm}
	a.ready = sync.NewCond(&a.mu)
	for i := 0; i < max(1, numWorkerThreads); i++ {
		a.workers.Add(1)
		go a.work()
	}
	return a
}

func (self *AsyncDBM) work() {
	defer self.workers.Done()
	for {
		self.mu.Lock()
		for len(self.queue) == 0 && !self.closed {
			self.ready.Wait()
		}
		if len(self.queue) == 0 {
			self.mu.Unlock()
			return
		}
		task := self.queue[0]
		self.queue[0] = nil
		self.queue = self.queue[1:]
		self.mu.Unlock()
		task()
	}
}

// Destruct waits for every call made to be done and stops the workers;
// later calls answer StatusPreconditionError.
func (self *AsyncDBM) Destruct() {
	self.mu.Lock()
	if self.closed {
		self.mu.Unlock()
		return
	}
	self.closed = true
	self.ready.Broadcast()
	self.mu.Unlock()
	self.workers.Wait()
}

// String describes the adapter.
func (self *AsyncDBM) String() string {
	self.mu.Lock()
	defer self.mu.Unlock()
	return fmt.Sprintf("#<memstored.AsyncDBM:%p:%s:queued=%d:closed=%t>",
		self, self.dbm, len(self.queue), self.closed)
}

// submit queues fill, which sets the future's results, and returns the
// future.
func (self *AsyncDBM) submit(fill func(f *Future)) *Future {
	f := newFuture()
	self.mu.Lock()
	defer self.mu.Unlock()
	if self.closed {
		return spentFuture()
	}
	self.queue = append(self.queue, func() {
		fill(f)
		close(f.done)
	})
	self.ready.Signal()
	return f
}

// status queues a call whose result is a status.
func (self *AsyncDBM) status(call func() *Status) *Future {
	return self.submit(func(f *Future) { f.status = call() })
}

// owned copies a key or value argument, so that the caller may reuse its
// slice once the call returns.
func owned(x interface{}) []byte {
	if b, ok := x.([]byte); ok && b != nil {
		return append([]byte{}, b...)
	}
	return ToByteArray(x)
}

// ownedOpt is owned for compare-exchange arguments, keeping the special
// values (nil, NilString, AnyBytes, AnyString) as they are.
func ownedOpt(x interface{}) interface{} {
	if IsNilData(x) || IsAnyData(x) {
		return x
	}
	return owned(x)
}

// Get fetches a value: read it with GetBytes or GetStr.
func (self *AsyncDBM) Get(key interface{}) *Future {
	k := owned(key)
	return self.submit(func(f *Future) { f.value, f.status = self.dbm.Get(k) })
}

// GetMulti fetches records: read them with GetMap or GetMapStr
// (StatusNotFoundError when some were absent).
func (self *AsyncDBM) GetMulti(keys []string) *Future {
	ks := append([]string{}, keys...)
	return self.submit(func(f *Future) {
		f.record = map[string][]byte{}
		f.status = self.dbm.getMulti(ks, func(k, v []byte) { f.record[string(k)] = v })
	})
}

// Set is DBM.Set.
func (self *AsyncDBM) Set(key interface{}, value interface{}, overwrite bool) *Future {
	k, v := owned(key), owned(value)
	return self.status(func() *Status { return self.dbm.Set(k, v, overwrite) })
}

func copyRecords(records map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(records))
	for k, v := range records {
		out[k] = append([]byte{}, v...)
	}
	return out
}

func copyStrRecords(records map[string]string) map[string]string {
	out := make(map[string]string, len(records))
	for k, v := range records {
		out[k] = v
	}
	return out
}

// SetMulti is DBM.SetMulti.
func (self *AsyncDBM) SetMulti(records map[string][]byte, overwrite bool) *Future {
	recs := copyRecords(records)
	return self.status(func() *Status { return self.dbm.SetMulti(recs, overwrite) })
}

// SetMultiStr is DBM.SetMultiStr.
func (self *AsyncDBM) SetMultiStr(records map[string]string, overwrite bool) *Future {
	recs := copyStrRecords(records)
	return self.status(func() *Status { return self.dbm.SetMultiStr(recs, overwrite) })
}

// Remove is DBM.Remove.
func (self *AsyncDBM) Remove(key interface{}) *Future {
	k := owned(key)
	return self.status(func() *Status { return self.dbm.Remove(k) })
}

// RemoveMulti is DBM.RemoveMulti.
func (self *AsyncDBM) RemoveMulti(keys []string) *Future {
	ks := append([]string{}, keys...)
	return self.status(func() *Status { return self.dbm.RemoveMulti(ks) })
}

// Append is DBM.Append.
func (self *AsyncDBM) Append(key interface{}, value interface{}, delim interface{}) *Future {
	k, v, d := owned(key), owned(value), owned(delim)
	return self.status(func() *Status { return self.dbm.Append(k, v, d) })
}

// AppendMulti is DBM.AppendMulti.
func (self *AsyncDBM) AppendMulti(records map[string][]byte, delim interface{}) *Future {
	recs, d := copyRecords(records), owned(delim)
	return self.status(func() *Status { return self.dbm.AppendMulti(recs, d) })
}

// AppendMultiStr is DBM.AppendMultiStr.
func (self *AsyncDBM) AppendMultiStr(records map[string]string, delim interface{}) *Future {
	recs, d := copyStrRecords(records), owned(delim)
	return self.status(func() *Status { return self.dbm.AppendMultiStr(recs, d) })
}

// CompareExchange is DBM.CompareExchange (with its special values).
func (self *AsyncDBM) CompareExchange(key interface{}, expected interface{}, desired interface{}) *Future {
	k, e, d := owned(key), ownedOpt(expected), ownedOpt(desired)
	return self.status(func() *Status { return self.dbm.CompareExchange(k, e, d) })
}

// Increment is DBM.Increment: read the new value with GetInt.
func (self *AsyncDBM) Increment(key interface{}, inc interface{}, init interface{}) *Future {
	k, i, n := owned(key), ToInt(inc), ToInt(init)
	return self.submit(func(f *Future) { f.num, f.status = self.dbm.Increment(k, i, n) })
}

func copyPairs(recs []KeyValuePair) []KeyValuePair {
	out := make([]KeyValuePair, len(recs))
	for i, r := range recs {
		out[i].Key = append([]byte{}, r.Key...)
		if r.Value != nil && !IsAnyBytes(r.Value) {
			out[i].Value = append([]byte{}, r.Value...)
		} else {
			out[i].Value = r.Value
		}
	}
	return out
}

// CompareExchangeMulti is DBM.CompareExchangeMulti.
func (self *AsyncDBM) CompareExchangeMulti(expected []KeyValuePair, desired []KeyValuePair) *Future {
	e, d := copyPairs(expected), copyPairs(desired)
	return self.status(func() *Status { return self.dbm.CompareExchangeMulti(e, d) })
}

// CompareExchangeMultiStr is DBM.CompareExchangeMultiStr.
func (self *AsyncDBM) CompareExchangeMultiStr(expected []KeyValueStrPair, desired []KeyValueStrPair) *Future {
	e, d := append([]KeyValueStrPair{}, expected...), append([]KeyValueStrPair{}, desired...)
	return self.status(func() *Status { return self.dbm.CompareExchangeMultiStr(e, d) })
}

// Rekey is DBM.Rekey.
func (self *AsyncDBM) Rekey(oldKey interface{}, newKey interface{}, overwrite bool, copying bool) *Future {
	o, n := owned(oldKey), owned(newKey)
	return self.status(func() *Status { return self.dbm.Rekey(o, n, overwrite, copying) })
}

// PopFirst is DBM.PopFirst: read the record with GetPair or GetPairStr.
func (self *AsyncDBM) PopFirst() *Future {
	return self.submit(func(f *Future) { f.key, f.value, f.status = self.dbm.PopFirst() })
}

// PushLast is DBM.PushLast.
func (self *AsyncDBM) PushLast(value interface{}, wtime float64) *Future {
	v := owned(value)
	return self.status(func() *Status { return self.dbm.PushLast(v, wtime) })
}

// Clear is DBM.Clear.
func (self *AsyncDBM) Clear() *Future { return self.status(self.dbm.Clear) }

// Rebuild is DBM.Rebuild.
func (self *AsyncDBM) Rebuild(params map[string]string) *Future {
	return self.status(func() *Status { return self.dbm.Rebuild(params) })
}

// Synchronize is DBM.Synchronize.
func (self *AsyncDBM) Synchronize(hard bool, params map[string]string) *Future {
	return self.status(func() *Status { return self.dbm.Synchronize(hard, params) })
}

// CopyFileData is DBM.CopyFileData.
func (self *AsyncDBM) CopyFileData(destPath string, syncHard bool) *Future {
	return self.status(func() *Status { return self.dbm.CopyFileData(destPath, syncHard) })
}

// Export is DBM.Export.
func (self *AsyncDBM) Export(destDBM *DBM) *Future {
	return self.status(func() *Status { return self.dbm.Export(destDBM) })
}

// ExportToFlatRecords is DBM.ExportToFlatRecords.
func (self *AsyncDBM) ExportToFlatRecords(destFile *File) *Future {
	return self.status(func() *Status { return self.dbm.ExportToFlatRecords(destFile) })
}

// ImportFromFlatRecords is DBM.ImportFromFlatRecords.
func (self *AsyncDBM) ImportFromFlatRecords(srcFile *File) *Future {
	return self.status(func() *Status { return self.dbm.ImportFromFlatRecords(srcFile) })
}

// Search is DBM.Search with its status: read the keys with GetArray or
// GetArrayStr.
func (self *AsyncDBM) Search(mode string, pattern string, capacity int) *Future {
	return self.submit(func(f *Future) { f.array, f.status = self.dbm.search(mode, pattern, capacity) })
}
