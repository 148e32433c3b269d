// Seed 004's second program (Tkrzw's Go announcement), with only the import
// path and package name changed: Alice sends Bob 500 in one atomic
// CompareExchangeMultiStr, retried while other writers interfere.
package main

import (
	"fmt"

	"memstored/bindings/go"
)

func main() {
	dbm := memstored.NewDBM()
	dbm.Open("casket.tkt", true, "truncate=true,num_buckets=100").OrDie()
	defer func() { dbm.Close().OrDie() }()

	dbm.Set("Bob", 1000, false).OrDie()
	dbm.Set("Alice", 3000, false).OrDie()

	transfer := func(src_key string, dest_key string, amount int64) *memstored.Status {
		old_src_value := memstored.ToInt(dbm.GetStrSimple(src_key, "0"))
		old_dest_value := memstored.ToInt(dbm.GetStrSimple(dest_key, "0"))

		new_src_value := old_src_value - amount
		new_dest_value := old_dest_value + amount
		if new_src_value < 0 {
			return memstored.NewStatus(memstored.StatusApplicationError, "insufficient value")
		}

		old_records := []memstored.KeyValueStrPair{
			{src_key, memstored.ToString(old_src_value)},
			{dest_key, memstored.ToString(old_dest_value)},
		}
		new_records := []memstored.KeyValueStrPair{
			{src_key, memstored.ToString(new_src_value)},
			{dest_key, memstored.ToString(new_dest_value)},
		}

		return dbm.CompareExchangeMultiStr(old_records, new_records)
	}

	var status *memstored.Status
	for num_tries := 0; num_tries < 100; num_tries++ {
		status = transfer("Alice", "Bob", 500)
		if !status.Equals(memstored.StatusInfeasibleError) {
			break
		}
	}
	status.OrDie()

	iter := dbm.MakeIterator()
	defer iter.Destruct()
	iter.First()
	for {
		key, value, status := iter.GetStr()
		if !status.IsOK() {
			break
		}
		fmt.Println(key, value)
		iter.Next()
	}
}
