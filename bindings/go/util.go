package memstored

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// ToString converts keys and values as the API takes them: strings and
// byte slices as they are, integers in decimal, floats with six decimals,
// booleans as "true"/"false", nil as "", other values by fmt.
func ToString(x interface{}) string {
	switch v := x.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case nil:
		return ""
	}
	return string(ToByteArray(x))
}

// ToByteArray converts like ToString, to bytes; a byte slice is not copied.
func ToByteArray(x interface{}) []byte {
	switch v := x.(type) {
	case []byte:
		return v
	case string:
		return []byte(v)
	case nil:
		return []byte{}
	case bool:
		return strconv.AppendBool(nil, v)
	case float32, float64, complex64, complex128:
		return []byte(fmt.Sprintf("%.6f", v))
	case error:
		return []byte(v.Error())
	case fmt.Stringer:
		return []byte(v.String())
	}
	rv := reflect.ValueOf(x)
	switch {
	case rv.CanInt():
		return strconv.AppendInt(nil, rv.Int(), 10)
	case rv.CanUint():
		return strconv.AppendUint(nil, rv.Uint(), 10)
	}
	return []byte(fmt.Sprintf("#<%T>", x))
}

// ToInt converts numbers, decimal text (integer or float) and booleans to
// an int64; anything else is 0.
func ToInt(x interface{}) int64 {
	switch v := x.(type) {
	case bool:
		if v {
			return 1
		}
		return 0
	case string, []byte:
		s := strings.TrimSpace(ToString(v))
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return int64(f)
		}
		return 0
	}
	rv := reflect.ValueOf(x)
	switch {
	case rv.CanInt():
		return rv.Int()
	case rv.CanUint():
		return int64(rv.Uint())
	case rv.CanFloat():
		return int64(rv.Float())
	}
	return 0
}

// ToFloat converts like ToInt, to a float64.
func ToFloat(x interface{}) float64 {
	switch v := x.(type) {
	case string, []byte:
		if f, err := strconv.ParseFloat(strings.TrimSpace(ToString(v)), 64); err == nil {
			return f
		}
		return 0
	}
	if rv := reflect.ValueOf(x); rv.CanFloat() {
		return rv.Float()
	}
	return float64(ToInt(x))
}

// ParseParams splits "k=v,k=v" into a map; fields without "=" are skipped.
func ParseParams(expr string) map[string]string {
	params := map[string]string{}
	for _, field := range strings.Split(expr, ",") {
		name, value, ok := strings.Cut(field, "=")
		name = strings.TrimSpace(name)
		if ok && name != "" {
			params[name] = strings.TrimSpace(value)
		}
	}
	return params
}

// joinParams renders parameters given as a "k=v,k=v" string, a map or nil
// as the C API's string (map keys sorted, so the result is stable).
func joinParams(params interface{}) (string, *Status) {
	switch p := params.(type) {
	case nil:
		return "", nil
	case string:
		return p, nil
	case map[string]string:
		fields := make([]string, 0, len(p))
		for k, v := range p {
			fields = append(fields, k+"="+v)
		}
		sort.Strings(fields)
		return strings.Join(fields, ","), nil
	}
	return "", NewStatus2(StatusInvalidArgumentError,
		fmt.Sprintf("parameters must be a string or map[string]string, not %T", params))
}
