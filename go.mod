module github.com/goslurm/goslurm

go 1.26

require github.com/cloudflare/circl v1.6.5

require golang.org/x/sys v0.47.0 // indirect
