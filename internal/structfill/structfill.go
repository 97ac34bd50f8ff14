// Package structfill sets every field of a struct by reflection, for the
// tests that compare a hand-written JSON reader or writer with
// encoding/json over every field of results.Row: a field added to the
// struct and not to the reader or writer then makes them fail.
package structfill

import (
	"fmt"
	"reflect"
)

// Fill sets every field of v (an addressable struct, as
// reflect.ValueOf(&x).Elem() gives) and of the structs within it: each
// string to next(), each integer to len(next())-3, each bool to whether
// len(next()) is even, each slice to n elements (integers k*1000-7, the
// k-th), so that next decides which fields are zero. A field of any other
// kind panics, saying which: Fill must learn it before a test relies on it.
func Fill(v reflect.Value, n int, next func() string) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(next())
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(len(next())) - 3)
		case reflect.Bool:
			f.SetBool(len(next())%2 == 0)
		case reflect.Slice:
			s := reflect.MakeSlice(f.Type(), n, n)
			for k := range n {
				if e := s.Index(k); e.Kind() == reflect.Struct {
					Fill(e, n, next)
				} else {
					e.SetInt(int64(k*1000 - 7))
				}
			}
			f.Set(s)
		case reflect.Struct:
			Fill(f, n, next)
		default:
			panic(fmt.Sprintf("structfill: field %s of %s is a %s", v.Type().Field(i).Name, v.Type(), f.Type()))
		}
	}
}
