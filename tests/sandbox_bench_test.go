package tests

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// BenchmarkExecuteEchoSandboxedVsUnconfined times `echo hi` through POST
// /execute, confined and unconfined ("sandbox": false), alternating one of
// each per iteration against one daemon, and reports both medians and the
// difference (docs/risk-policy.md R21 sets a 5 ms budget for it).
//
//	go test ./tests/ -run '^$' -bench ExecuteEcho -benchtime 200x
func BenchmarkExecuteEchoSandboxedVsUnconfined(b *testing.B) {
	s := startSandboxed(b, "")
	session := s.session(b, "autobot", "automation_agent")
	path := "/api/agent-terminal/execute?session_id=" + session
	var confined, free []time.Duration
	run := func(body map[string]any, into *[]time.Duration) {
		start := time.Now()
		status, res := s.api(b, "autobot", "POST", path, body)
		*into = append(*into, time.Since(start))
		if status != http.StatusOK || res["status"] != "success" || res["stdout"] != "hi\n" {
			b.Fatalf("echo hi answered %d %v", status, res)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			run(map[string]any{"command": "echo hi"}, &confined)
			run(map[string]any{"command": "echo hi", "sandbox": false}, &free)
		} else {
			run(map[string]any{"command": "echo hi", "sandbox": false}, &free)
			run(map[string]any{"command": "echo hi"}, &confined)
		}
	}
	b.StopTimer()
	pc, pf := median(confined), median(free)
	b.ReportMetric(float64(pc.Microseconds())/1000, "sandboxed-p50-ms")
	b.ReportMetric(float64(pf.Microseconds())/1000, "unconfined-p50-ms")
	b.ReportMetric(float64((pc-pf).Microseconds())/1000, "extra-p50-ms")
	b.ReportMetric(float64(pc)/float64(pf), "ratio")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
