package memstored

// StatusCode is the kind of a Status; the values are Tkrzw's.
type StatusCode int32

// The status codes, as in Tkrzw.
const (
	StatusSuccess              = StatusCode(0)
	StatusUnknownError         = StatusCode(1)
	StatusSystemError          = StatusCode(2)
	StatusNotImplementedError  = StatusCode(3)
	StatusPreconditionError    = StatusCode(4)
	StatusInvalidArgumentError = StatusCode(5)
	StatusCanceledError        = StatusCode(6)
	StatusNotFoundError        = StatusCode(7)
	StatusPermissionError      = StatusCode(8)
	StatusInfeasibleError      = StatusCode(9)
	StatusDuplicationError     = StatusCode(10)
	StatusBrokenDataError      = StatusCode(11)
	StatusNetworkError         = StatusCode(12)
	StatusApplicationError     = StatusCode(13)
)

var statusNames = [...]string{
	"SUCCESS", "UNKNOWN_ERROR", "SYSTEM_ERROR", "NOT_IMPLEMENTED_ERROR",
	"PRECONDITION_ERROR", "INVALID_ARGUMENT_ERROR", "CANCELED_ERROR", "NOT_FOUND_ERROR",
	"PERMISSION_ERROR", "INFEASIBLE_ERROR", "DUPLICATION_ERROR", "BROKEN_DATA_ERROR",
	"NETWORK_ERROR", "APPLICATION_ERROR",
}

// StatusCodeName returns the name of a code, e.g. "NOT_FOUND_ERROR".
func StatusCodeName(code StatusCode) string {
	if code >= 0 && int(code) < len(statusNames) {
		return statusNames[code]
	}
	return "invalid code"
}

// Status is the outcome of an operation: a code and a message.
// It implements error.
type Status struct {
	code    StatusCode
	message string
}

// NewStatus makes a status from an optional code and an optional message:
// NewStatus(), NewStatus(code), NewStatus(code, "message").
func NewStatus(args ...interface{}) *Status {
	s := &Status{}
	s.Set(args...)
	return s
}

// NewStatus1 makes a status with a code and no message.
func NewStatus1(code StatusCode) *Status { return &Status{code: code} }

// NewStatus2 makes a status with a code and a message.
func NewStatus2(code StatusCode, message string) *Status {
	return &Status{code: code, message: message}
}

// Set replaces the code and message, given as in NewStatus.
func (self *Status) Set(args ...interface{}) {
	self.code, self.message = StatusSuccess, ""
	if len(args) > 0 {
		self.code = args[0].(StatusCode)
	}
	if len(args) > 1 {
		self.message = args[1].(string)
	}
}

// String returns the code name and, when there is one, the message.
func (self *Status) String() string {
	if self.message == "" {
		return StatusCodeName(self.code)
	}
	return StatusCodeName(self.code) + ": " + self.message
}

// Error returns the code name, as Tkrzw's Go binding does.
func (self *Status) Error() string { return StatusCodeName(self.code) }

// GetCode returns the code.
func (self *Status) GetCode() StatusCode { return self.code }

// GetMessage returns the message.
func (self *Status) GetMessage() string { return self.message }

// Join keeps the first failure: it takes rhs only while self is a success.
func (self *Status) Join(rhs *Status) {
	if self.code == StatusSuccess {
		self.code, self.message = rhs.code, rhs.message
	}
}

// Equals compares the code with a Status, *Status or StatusCode.
func (self *Status) Equals(rhs interface{}) bool {
	switch r := rhs.(type) {
	case Status:
		return self.code == r.code
	case *Status:
		return r != nil && self.code == r.code
	case StatusCode:
		return self.code == r
	}
	return false
}

// IsOK tells whether the status is a success.
func (self *Status) IsOK() bool { return self.code == StatusSuccess }

// OrDie panics unless the status is a success.
func (self *Status) OrDie() {
	if self.code != StatusSuccess {
		panic(self.String())
	}
}
