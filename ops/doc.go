// Package ops holds tagq's operations files: Prometheus alert rules
// (prometheus/tagq-alerts.yml) and a Grafana dashboard
// (grafana/tagq-dashboard.json), and the tests that check them with
// Prometheus's own packages. It is a module of its own so that the server's
// module does not depend on Prometheus's server code.
package ops
