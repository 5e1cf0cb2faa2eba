// Package metrics exposes the daemon's counts to Prometheus.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shellgate/shellgate/app/terminals"
)

// Metrics counts connections, traffic and dropped clients, and reads the
// terminal host's counts (terminals.App.Stats) when scraped.
type Metrics struct {
	registry    *prometheus.Registry
	connections prometheus.Gauge
	bytesOut    prometheus.Counter
	slowDropped prometheus.Counter
}

// New registers shellgate's metrics (and the Go runtime's) in a registry of
// their own.
func New(app *terminals.App) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		connections: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "shellgate_connections", Help: "Protocol connections open now.",
		}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "shellgate_bytes_out_total", Help: "Bytes of protocol messages sent to clients.",
		}),
		slowDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "shellgate_slow_clients_dropped_total", Help: "Clients closed because they fell too far behind.",
		}),
	}
	terms := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "shellgate_terminals", Help: "Terminals open now (running or exited, until disposed).",
	}, func() float64 { return float64(app.Stats().Terminals) })
	pauses := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "shellgate_output_pauses_total", Help: "Times a terminal stopped reading its process because every viewer was behind.",
	}, func() float64 { return float64(app.Stats().Pauses) })
	held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "shellgate_client_bytes_held", Help: "Bytes queued or being written for every client together (max_client_memory caps it).",
	}, func() float64 { return float64(app.Stats().Held) })
	m.registry.MustRegister(m.connections, m.bytesOut, m.slowDropped, terms, pauses, held,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// HostState is what the metrics show of one host reached over SSH.
type HostState struct {
	Name      string
	Up        bool
	RoundTrip time.Duration
	Sessions  int
}

// WatchHosts reports the hosts list gives when scraped: whether each is
// connected, its last keepalive round trip and the processes it carries.
func (m *Metrics) WatchHosts(list func() []HostState) {
	m.registry.MustRegister(hostCollector{list})
}

var (
	hostUpDesc = prometheus.NewDesc("shellgate_host_up",
		"1 while the host's SSH connection is up, 0 while it is down.", []string{"host"}, nil)
	hostRTTDesc = prometheus.NewDesc("shellgate_host_round_trip_seconds",
		"The last keepalive's round trip on the host's SSH connection.", []string{"host"}, nil)
	hostSessionsDesc = prometheus.NewDesc("shellgate_host_terminals",
		"Processes running on the host over its SSH connection now.", []string{"host"}, nil)
)

type hostCollector struct{ list func() []HostState }

func (c hostCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- hostUpDesc
	ch <- hostRTTDesc
	ch <- hostSessionsDesc
}

func (c hostCollector) Collect(ch chan<- prometheus.Metric) {
	for _, h := range c.list() {
		up := 0.0
		if h.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(hostUpDesc, prometheus.GaugeValue, up, h.Name)
		ch <- prometheus.MustNewConstMetric(hostRTTDesc, prometheus.GaugeValue, h.RoundTrip.Seconds(), h.Name)
		ch <- prometheus.MustNewConstMetric(hostSessionsDesc, prometheus.GaugeValue, float64(h.Sessions), h.Name)
	}
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// ConnectionOpened counts a new connection.
func (m *Metrics) ConnectionOpened() { m.connections.Inc() }

// ConnectionClosed counts a connection ending.
func (m *Metrics) ConnectionClosed() { m.connections.Dec() }

// BytesSent adds to the bytes sent.
func (m *Metrics) BytesSent(n int) { m.bytesOut.Add(float64(n)) }

// SlowClientDropped counts a client closed for falling behind.
func (m *Metrics) SlowClientDropped() { m.slowDropped.Inc() }
