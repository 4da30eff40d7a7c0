module github.com/goslurm/goslurm

go 1.26

require (
	github.com/alecthomas/kong v1.17.0
	github.com/cloudflare/circl v1.6.5
)

require (
	github.com/golang-jwt/jwt/v5 v5.3.1 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
