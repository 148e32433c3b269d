// Seed 004's first program (Tkrzw's Go announcement), with only the import
// path and package name changed: three records in a hash file, read back
// one by one and listed with EachStr.
package main

import (
	"fmt"

	"memstored/bindings/go"
)

func main() {
	dbm := memstored.NewDBM()
	dbm.Open("casket.tkh", true, "truncate=true,num_buckets=100")

	dbm.Set("first", "hop", true)
	dbm.Set("second", "step", true)
	dbm.Set("third", "jump", true)

	fmt.Println(dbm.GetStrSimple("first", "*"))
	fmt.Println(dbm.GetStrSimple("second", "*"))
	fmt.Println(dbm.GetStrSimple("third", "*"))

	for record := range dbm.EachStr() {
		fmt.Println(record.Key, record.Value)
	}

	dbm.Close()
}
