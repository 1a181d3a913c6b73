package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
)

// ensureNamespaces creates the namespaces of nss that do not exist yet.
func (e *Env) ensureNamespaces(ctx context.Context, nss []string) error {
	for _, ns := range nss {
		if ns == Namespace {
			continue
		}
		if _, err := e.client.CreateNamespace(ctx, api.CreateNamespaceRequest{Name: ns, Description: "tether bench"}); err != nil &&
			!errors.Is(err, client.ErrConflict) {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	return nil
}

// citusNode is one node of the Citus cluster whose coordinator is the
// bench's database, measured on its own: its PostgreSQL processes' CPU
// (when it runs on this machine) and its database's commits.
type citusNode struct {
	// Name is "coordinator" or "worker host:port".
	Name string
	// Namespaces are the bench namespaces whose shards the node holds.
	Namespaces []string
	pool       *pgxpool.Pool
	pid        int // postmaster, 0 when not on this machine
	// at the window's start, and the deltas at its mark and end
	cpu0, CPU         time.Duration
	commits0, Commits int64
}

// citusNodes returns the nodes of the Citus cluster the bench's database
// coordinates (nil on a plain PostgreSQL), with the namespaces of nss each
// holds; each node is reached with the database URL's credentials at the
// host and port the cluster knows it by. The caller closes them
// (closeCitusNodes).
func (e *Env) citusNodes(ctx context.Context, nss []string) ([]*citusNode, error) {
	if e.DB == nil {
		return nil, nil
	}
	var citus bool
	if err := e.DB.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&citus); err != nil {
		return nil, fmt.Errorf("citus nodes: %w", err)
	}
	if !citus {
		return nil, nil
	}
	rows, err := e.DB.Query(ctx, `
		SELECT nodename, nodeport, groupid = 0 FROM pg_dist_node
		WHERE isactive AND noderole = 'primary' ORDER BY groupid, nodename, nodeport`)
	if err != nil {
		return nil, fmt.Errorf("citus nodes: %w", err)
	}
	type addr struct {
		host  string
		port  int
		coord bool
	}
	addrs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (addr, error) {
		var a addr
		return a, r.Scan(&a.host, &a.port, &a.coord)
	})
	if err != nil {
		return nil, fmt.Errorf("citus nodes: %w", err)
	}
	// The coordinator is listed only once citus_set_coordinator_host ran:
	// the bench's own database is it either way.
	var nodes []*citusNode
	hasCoord := false
	for _, a := range addrs {
		hasCoord = hasCoord || a.coord
	}
	if !hasCoord {
		nodes = append(nodes, &citusNode{Name: "coordinator", pool: nil})
	}
	byAddr := map[string]*citusNode{}
	for _, a := range addrs {
		n := &citusNode{Name: "worker " + a.host + ":" + strconv.Itoa(a.port)}
		if a.coord {
			n.Name = "coordinator"
		} else {
			cfg, err := pgxpool.ParseConfig(e.DatabaseURL)
			if err != nil {
				closeCitusNodes(nodes)
				return nil, fmt.Errorf("citus node %s: %w", n.Name, err)
			}
			cfg.ConnConfig.Host, cfg.ConnConfig.Port = a.host, uint16(a.port)
			cfg.ConnConfig.Fallbacks = nil
			cfg.MaxConns = 1
			if n.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
				closeCitusNodes(nodes)
				return nil, fmt.Errorf("citus node %s: %w", n.Name, err)
			}
		}
		byAddr[a.host+":"+strconv.Itoa(a.port)] = n
		nodes = append(nodes, n)
	}
	for _, ns := range nss {
		var host string
		var port int
		err := e.DB.QueryRow(ctx, `
			SELECT nodename, nodeport FROM citus_shards
			WHERE table_name = 'instances'::regclass
			  AND shardid = get_shard_id_for_distribution_column('instances', $1::text)`, ns).Scan(&host, &port)
		if err != nil {
			closeCitusNodes(nodes)
			return nil, fmt.Errorf("citus node of namespace %s: %w", ns, err)
		}
		if n := byAddr[host+":"+strconv.Itoa(port)]; n != nil {
			n.Namespaces = append(n.Namespaces, ns)
		}
	}
	for _, n := range nodes {
		q := n.pool
		if q == nil {
			q = e.DB
		}
		n.pid, _ = backendParent(ctx, q)
	}
	return nodes, nil
}

// backendParent is the postmaster of the server q reaches, when it runs on
// this machine: the parent of a backend of q.
func backendParent(ctx context.Context, q *pgxpool.Pool) (int, bool) {
	var backend int
	if err := q.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0, false
	}
	f, ok := procStat(backend)
	if !ok || len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return 0, false
	}
	return ppid, true
}

// closeCitusNodes closes the nodes' connections.
func closeCitusNodes(nodes []*citusNode) {
	for _, n := range nodes {
		if n.pool != nil {
			n.pool.Close()
		}
	}
}

// commits reads the node's commit counter of the bench's database.
func (n *citusNode) commits(ctx context.Context, coord *pgxpool.Pool) (int64, error) {
	q := n.pool
	if q == nil {
		q = coord
	}
	var c int64
	err := q.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`).Scan(&c)
	if err != nil {
		return 0, fmt.Errorf("commits of citus node %s: %w", n.Name, err)
	}
	return c, nil
}

// begin reads the node's counters at the window's start.
func (n *citusNode) begin(ctx context.Context, coord *pgxpool.Pool) error {
	c, err := n.commits(ctx, coord)
	if err != nil {
		return err
	}
	n.commits0 = c
	if n.pid > 0 {
		if cpu, ok := postgresCPU(n.pid); ok {
			n.cpu0 = cpu
		} else {
			n.pid = 0
		}
	}
	return nil
}

// mark takes the node's CPU at the window's mark.
func (n *citusNode) mark() {
	if n.pid > 0 {
		if cpu, ok := postgresCPU(n.pid); ok {
			n.CPU = cpu - n.cpu0
		} else {
			n.pid = 0
		}
	}
}

// end takes the node's commits once its statistics are published.
func (n *citusNode) end(ctx context.Context, coord *pgxpool.Pool) error {
	c, err := n.commits(ctx, coord)
	if err != nil {
		return err
	}
	n.Commits = c - n.commits0
	return nil
}

// citusFigures appends each node's CPU and commits per unit of work.
func (r *Report) citusFigures(nodes []*citusNode, per string, n int) {
	if len(nodes) == 0 || n <= 0 {
		return
	}
	var total time.Duration
	for i, node := range nodes {
		label := node.Name
		if len(node.Namespaces) > 0 {
			label += " (" + strings.Join(node.Namespaces, ", ") + ")"
		}
		key := "citus_node" + strconv.Itoa(i)
		if node.pid > 0 {
			total += node.CPU
			r.add(key+"_cpu_ms_per_"+per, label+": CPU per "+per, ms(node.CPU)/float64(n), "ms")
		}
		r.add(key+"_commits_per_"+per, label+": commits per "+per, float64(node.Commits)/float64(n), "")
	}
	r.add("citus_cpu_ms_per_"+per, "Citus nodes: CPU per "+per, ms(total)/float64(n), "ms")
	r.note("Citus: each node's CPU is its PostgreSQL processes' (postmaster, backends, reaped children) over the measurement; its commits are its database's, read once its backends published them (%s after the load)", statsIdleWait)
}
