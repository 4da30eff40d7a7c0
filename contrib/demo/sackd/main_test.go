package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goslurm/goslurm/credential/slurmauth"
)

// publicDir is a 0755 temporary directory (the sack socket's directory
// must not be group or other writable, and t.TempDir's parents are 0700
// only for us, which is fine).
func publicDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeConf(t *testing.T, dir, authType string) (conf, sock string, key *slurmauth.Key) {
	t.Helper()
	keyPath := filepath.Join(dir, "slurm.key")
	key, err := slurmauth.GenerateKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(dir, "run", "sack.socket")
	text := "ClusterName=demo\nSlurmctldHost=localhost\nAuthType=" + authType +
		"\nAuthInfo=key=" + keyPath + ",sack_socket=" + sock +
		"\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=ALL\n"
	conf = filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf, sock, key
}

// TestServesTokens runs sackd, gets a token for ourselves through its
// socket, checks it with the key, and checks that stopping removes the
// socket and the pid file.
func TestServesTokens(t *testing.T) {
	dir := publicDir(t)
	conf, sock, key := writeConf(t, dir, "auth/slurm")
	pidFile := filepath.Join(dir, "sackd.pid")
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, &CLI{ConfFile: conf, PidFile: pidFile}, &log) }()

	cl := &slurmauth.SackClient{Paths: []string{sock}, Timeout: 5 * time.Second}
	var tok string
	var err error
	for range 100 { // the socket appears once run has listened
		if tok, err = cl.Create(context.Background(), slurmauth.UIDAny, nil); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		cancel()
		t.Fatalf("create: %v (log: %s)", err, log.String())
	}
	c, err := key.Parse(tok, slurmauth.VerifyParams{Now: time.Now(), DecoderUID: uint32(os.Getuid()), Cluster: "demo"})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if c.UID != uint32(os.Getuid()) || c.Context != slurmauth.ContextSack {
		t.Errorf("claims uid %d context %q, want uid %d context sack", c.UID, c.Context, os.Getuid())
	}
	if _, err := os.Stat(pidFile); err != nil {
		t.Errorf("pid file: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, p := range []string{sock, pidFile} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
}

func TestRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, authType string
		dropKey        bool
		want           string
	}{
		{"munge cluster", "auth/munge", false, "sackd serves auth/slurm only"},
		{"no key", "auth/slurm", true, "unusable key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := publicDir(t)
			conf, _, _ := writeConf(t, dir, tc.authType)
			if tc.dropKey {
				os.Remove(filepath.Join(dir, "slurm.key"))
			}
			var log bytes.Buffer
			err := run(context.Background(), &CLI{ConfFile: conf}, &log)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
