package memstored

import (
	"fmt"
	"sync"
	"time"
)

// Future is the result of an AsyncDBM call, ready when the call is done.
// Read it once with Get or one of the GetXxx methods (which wait), or
// drop it with Destruct; a second read answers StatusPreconditionError.
type Future struct {
	done  chan struct{}
	mu    sync.Mutex // guards spent
	spent bool
	// Set by the worker before done is closed; read only after.
	status *Status
	key    []byte
	value  []byte
	array  []string
	record map[string][]byte
	num    int64
}

func newFuture() *Future { return &Future{done: make(chan struct{})} }

// spentFuture is the future of a call on a destructed AsyncDBM.
func spentFuture() *Future {
	f := newFuture()
	f.status = NewStatus2(StatusPreconditionError, "destructed object")
	close(f.done)
	f.spent = true
	return f
}

// Destruct drops the future; the call still runs to its end.
func (self *Future) Destruct() {
	self.mu.Lock()
	self.spent = true
	self.mu.Unlock()
}

// String describes the future.
func (self *Future) String() string {
	self.mu.Lock()
	defer self.mu.Unlock()
	state := "pending"
	if self.spent {
		state = "destructed"
	} else if self.ready() {
		state = "done"
	}
	return fmt.Sprintf("#<memstored.Future:%p:%s>", self, state)
}

func (self *Future) ready() bool {
	select {
	case <-self.done:
		return true
	default:
		return false
	}
}

// Wait waits for the call to be done, at most timeout seconds (negative:
// without limit), and tells whether it is; false for a spent future.
func (self *Future) Wait(timeout float64) bool {
	self.mu.Lock()
	spent := self.spent
	self.mu.Unlock()
	if spent {
		return false
	}
	if timeout < 0 {
		<-self.done
		return true
	}
	timer := time.NewTimer(time.Duration(timeout * float64(time.Second)))
	defer timer.Stop()
	select {
	case <-self.done:
		return true
	case <-timer.C:
		return false
	}
}

// take waits for the result and marks the future spent; false when it
// already was.
func (self *Future) take() bool {
	self.mu.Lock()
	spent := self.spent
	self.spent = true
	self.mu.Unlock()
	if spent {
		return false
	}
	<-self.done
	return true
}

func spentStatus() *Status { return NewStatus2(StatusPreconditionError, "destructed object") }

// Get waits for the call and returns its status.
func (self *Future) Get() *Status {
	if !self.take() {
		return spentStatus()
	}
	return self.status
}

// GetBytes waits for the call and returns its value (Get, PopFirst's value).
func (self *Future) GetBytes() ([]byte, *Status) {
	if !self.take() {
		return nil, spentStatus()
	}
	return self.value, self.status
}

// GetStr is GetBytes with a string.
func (self *Future) GetStr() (string, *Status) {
	v, st := self.GetBytes()
	return string(v), st
}

// GetPair waits for the call and returns its key and value (PopFirst).
func (self *Future) GetPair() ([]byte, []byte, *Status) {
	if !self.take() {
		return nil, nil, spentStatus()
	}
	return self.key, self.value, self.status
}

// GetPairStr is GetPair with strings.
func (self *Future) GetPairStr() (string, string, *Status) {
	k, v, st := self.GetPair()
	return string(k), string(v), st
}

// GetArray waits for the call and returns its list (Search's keys).
func (self *Future) GetArray() ([][]byte, *Status) {
	if !self.take() {
		return nil, spentStatus()
	}
	out := make([][]byte, len(self.array))
	for i, s := range self.array {
		out[i] = []byte(s)
	}
	return out, self.status
}

// GetArrayStr is GetArray with strings.
func (self *Future) GetArrayStr() ([]string, *Status) {
	if !self.take() {
		return nil, spentStatus()
	}
	return self.array, self.status
}

// GetMap waits for the call and returns its records (GetMulti).
func (self *Future) GetMap() (map[string][]byte, *Status) {
	if !self.take() {
		return nil, spentStatus()
	}
	return self.record, self.status
}

// GetMapStr is GetMap with string values.
func (self *Future) GetMapStr() (map[string]string, *Status) {
	m, st := self.GetMap()
	if m == nil {
		return nil, st
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out, st
}

// GetInt waits for the call and returns its number (Increment).
func (self *Future) GetInt() (int64, *Status) {
	if !self.take() {
		return 0, spentStatus()
	}
	return self.num, self.status
}
