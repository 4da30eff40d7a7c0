package cli

import (
	"errors"
	"io"
	"os"
)

// OSIO returns the process's real standard streams, environment and file
// system.
func OSIO() IO {
	return IO{
		Stdin:    os.Stdin,
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Getenv:   os.LookupEnv,
		ReadFile: ReadFileLimit,
	}
}

// ReadFileLimit reads at most limit bytes of the named file. A failure to
// open it is an *OpenError.
func ReadFileLimit(name string, limit int) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, &OpenError{Err: err}
	}
	defer f.Close()
	buf := make([]byte, limit)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, err
	}
	return buf[:n], nil
}
