package pix_test

import "testing"

func testMain(m *testing.M) int { return m.Run() }
