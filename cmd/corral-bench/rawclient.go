package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// timer times one GET of a path.
type timer interface {
	timeGet(path string) (time.Duration, int, error)
}

// syncClient times requests on one keep-alive connection, writing each
// request and reading its answer in the calling goroutine. Go's
// net/http client hands every request to a writing and a reading
// goroutine of the connection; on a machine idle between requests, waking
// them costs tens of microseconds that belong to neither server, and that
// count for most on the fastest one. Both servers of a latency row are
// timed with it alike.
type syncClient struct {
	host, base, header, token string
	conn                      net.Conn
	r                         *bufio.Reader
}

func newSyncClient(base, header, token string) (*syncClient, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	return &syncClient{host: u.Host, base: u.Path, header: header, token: token}, nil
}

func (c *syncClient) timeGet(path string) (time.Duration, int, error) {
	req := "GET " + c.base + path + " HTTP/1.1\r\nHost: " + c.host + "\r\n" + c.header + ": " + c.token +
		"\r\nOpenStack-API-Version: placement 1.32\r\n\r\n"
	t := time.Now()
	if c.conn == nil {
		if err := c.dial(); err != nil {
			return 0, 0, err
		}
	}
	if _, err := io.WriteString(c.conn, req); err != nil {
		// The server closed an idle connection: once more on a new one.
		if err = c.dial(); err != nil {
			return 0, 0, err
		}
		t = time.Now()
		if _, err = io.WriteString(c.conn, req); err != nil {
			return 0, 0, err
		}
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.close()
		return 0, 0, fmt.Errorf("GET %s: %w", path, err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(t)
	if resp.Close || err != nil {
		c.close()
	}
	return took, resp.StatusCode, err
}

func (c *syncClient) dial() error {
	c.close()
	conn, err := net.Dial("tcp", c.host)
	if err != nil {
		return err
	}
	c.conn, c.r = conn, bufio.NewReaderSize(conn, 64<<10)
	return nil
}

func (c *syncClient) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}
