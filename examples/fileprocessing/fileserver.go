package fileprocessing

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// maxUpload bounds an upload's body.
const maxUpload = 64 << 20

// FileServer is the sample's stand-in for the outside world, on a loopback
// port: it serves the input files (GET /files/{name}) and receives the
// processed ones (PUT or POST /uploads/{name}, gzip-compressed, with the
// SHA-256 of the uncompressed content in the X-Content-Sha256 header),
// which it checks and stores in its destination directory.
type FileServer struct {
	dest string
	log  *slog.Logger
	ln   net.Listener
	srv  *http.Server
	done chan struct{}

	mu      sync.Mutex
	files   map[string][]byte
	uploads map[string]Upload
}

// Upload is a file the server received.
type Upload struct {
	Name string
	// Path is where it was stored.
	Path string
	// SHA256 is the checksum of the uncompressed content.
	SHA256 string
	// Bytes is the compressed size.
	Bytes int64
	// Worker is the uploading worker (X-Tether-Worker).
	Worker string
	At     time.Time
}

// StartFileServer listens on 127.0.0.1 (a free port) and stores uploads in
// destDir (created if needed).
func StartFileServer(destDir string, log *slog.Logger) (*FileServer, error) {
	if log == nil {
		log = slog.Default()
	}
	if err := os.MkdirAll(destDir, 0o755); err != nil {
		return nil, fmt.Errorf("file server: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("file server: %w", err)
	}
	fs := &FileServer{dest: destDir, log: log, ln: ln, done: make(chan struct{}),
		files: map[string][]byte{}, uploads: map[string]Upload{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /files/{name}", fs.serveFile)
	mux.HandleFunc("PUT /uploads/{name}", fs.receive)
	mux.HandleFunc("POST /uploads/{name}", fs.receive)
	fs.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(fs.done)
		if err := fs.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("file server stopped", "error", err)
		}
	}()
	return fs, nil
}

// URL is the server's base URL.
func (fs *FileServer) URL() string { return "http://" + fs.ln.Addr().String() }

// Close stops the server.
func (fs *FileServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := fs.srv.Shutdown(ctx)
	<-fs.done
	return err
}

// Add makes content available at SourceURL(name) and returns its SHA-256.
func (fs *FileServer) Add(name string, content []byte) string {
	fs.mu.Lock()
	fs.files[name] = content
	fs.mu.Unlock()
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// Generate adds a file of size bytes of pseudo-random text, the same for
// the same name and size, and returns its SHA-256.
func (fs *FileServer) Generate(name string, size int) string {
	seed := sha256.Sum256([]byte(name))
	var key [32]byte
	copy(key[:], seed[:])
	r := rand.New(rand.NewChaCha8(key))
	words := []string{"tether ", "durable ", "host ", "queue ", "worker ", "file ", "process ", "upload ", "lease ", "\n"}
	var b bytes.Buffer
	for b.Len() < size {
		b.WriteString(words[r.IntN(len(words))])
	}
	return fs.Add(name, b.Bytes()[:size])
}

// SourceURL is where name is served.
func (fs *FileServer) SourceURL(name string) string { return fs.URL() + "/files/" + name }

// DestURL is where name is to be uploaded.
func (fs *FileServer) DestURL(name string) string { return fs.URL() + "/uploads/" + name }

// Uploads returns the files received, by name.
func (fs *FileServer) Uploads() map[string]Upload {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make(map[string]Upload, len(fs.uploads))
	for k, v := range fs.uploads {
		out[k] = v
	}
	return out
}

// Names returns the names of the served files, sorted.
func (fs *FileServer) Names() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var names []string
	for n := range fs.files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (fs *FileServer) serveFile(w http.ResponseWriter, r *http.Request) {
	fs.mu.Lock()
	content, ok := fs.files[r.PathValue("name")]
	fs.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write(content)
}

// receive stores an upload after checking that it decompresses to content
// with the announced checksum (422 otherwise).
func (fs *FileServer) receive(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "" || name != filepath.Base(name) || name[0] == '.' {
		http.Error(w, "bad name", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxUpload))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		http.Error(w, "not gzip: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	h := sha256.New()
	if _, err := io.Copy(h, zr); err != nil {
		http.Error(w, "bad gzip: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if want := r.Header.Get(HeaderSHA256); want != sum {
		http.Error(w, fmt.Sprintf("checksum mismatch: content is %s, header says %q", sum, want), http.StatusUnprocessableEntity)
		return
	}
	path := filepath.Join(fs.dest, name+".gz")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		http.Error(w, "store: "+err.Error(), http.StatusInternalServerError)
		return
	}
	up := Upload{Name: name, Path: path, SHA256: sum, Bytes: int64(len(body)), Worker: r.Header.Get(HeaderWorker), At: time.Now()}
	fs.mu.Lock()
	fs.uploads[name] = up
	fs.mu.Unlock()
	fs.log.Debug("upload received", "name", name, "bytes", len(body), "worker", up.Worker)
	w.WriteHeader(http.StatusCreated)
}

// VerifyUpload re-reads the stored upload of name and checks that it
// decompresses to content with the checksum want.
func (fs *FileServer) VerifyUpload(name, want string) error {
	up, ok := fs.Uploads()[name]
	if !ok {
		return fmt.Errorf("%s was not uploaded", name)
	}
	f, err := os.Open(up.Path)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	h := sha256.New()
	if _, err := io.Copy(h, zr); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: uploaded content has SHA-256 %s, want %s", name, got, want)
	}
	return nil
}
