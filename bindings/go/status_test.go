package memstored

import (
	"strings"
	"testing"
)

func TestStatusCodesAndNames(t *testing.T) {
	if StatusSuccess != 0 || StatusNotFoundError != 7 || StatusInfeasibleError != 9 ||
		StatusApplicationError != 13 {
		t.Fatal("status codes differ from Tkrzw's")
	}
	if StatusCodeName(StatusDuplicationError) != "DUPLICATION_ERROR" || StatusCodeName(99) != "invalid code" {
		t.Fatal("wrong names")
	}
	s := NewStatus(StatusApplicationError, "insufficient value")
	if s.GetCode() != StatusApplicationError || s.GetMessage() != "insufficient value" || s.IsOK() {
		t.Fatalf("NewStatus: %v", s)
	}
	if s.String() != "APPLICATION_ERROR: insufficient value" || s.Error() != "APPLICATION_ERROR" {
		t.Fatalf("String %q Error %q", s.String(), s.Error())
	}
	if !s.Equals(StatusApplicationError) || !s.Equals(NewStatus1(StatusApplicationError)) ||
		s.Equals(StatusSuccess) || s.Equals("APPLICATION_ERROR") {
		t.Fatal("Equals")
	}
	if !NewStatus().IsOK() || NewStatus2(StatusNotFoundError, "x").IsOK() {
		t.Fatal("IsOK")
	}
	j := NewStatus()
	j.Join(NewStatus1(StatusNotFoundError))
	j.Join(NewStatus1(StatusSystemError))
	if !j.Equals(StatusNotFoundError) {
		t.Fatalf("Join kept %v", j)
	}
	var err error = s
	if err.Error() != "APPLICATION_ERROR" {
		t.Fatal("Status is not an error")
	}
	NewStatus().OrDie()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "insufficient") {
			t.Fatalf("OrDie panicked with %v", r)
		}
	}()
	s.OrDie()
}

func TestConversions(t *testing.T) {
	cases := map[string]interface{}{"abc": "abc", "xyz": []byte("xyz"), "1000": 1000, "-5": int64(-5),
		"7": uint8(7), "true": true, "1.500000": 1.5, "": nil}
	for want, in := range cases {
		if got := ToString(in); got != want {
			t.Errorf("ToString(%#v) = %q, want %q", in, got, want)
		}
		if got := string(ToByteArray(in)); got != want {
			t.Errorf("ToByteArray(%#v) = %q, want %q", in, got, want)
		}
	}
	ints := map[int64]interface{}{2500: "2500", -3: " -3 ", 12: "12.9", 0: "abc", 1: true, 42: 42.7, 9: []byte("9")}
	for want, in := range ints {
		if got := ToInt(in); got != want {
			t.Errorf("ToInt(%#v) = %d, want %d", in, got, want)
		}
	}
	if ToFloat("2.5") != 2.5 || ToFloat(3) != 3 {
		t.Error("ToFloat")
	}
	p := ParseParams("truncate=true, num_buckets=100,junk")
	if len(p) != 2 || p["truncate"] != "true" || p["num_buckets"] != "100" {
		t.Errorf("ParseParams: %v", p)
	}
}
