package framework

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// EstablishedConnections returns how many established TCP connections process pid holds to address (host:port,
// an IPv4 or IPv6 literal host), read from the sockets among its open file descriptors (/proc/<pid>/fd) and the
// connection tables of its network namespace (/proc/<pid>/net/tcp and tcp6). It returns an error naming the file
// it could not read, or the address it could not parse. Linux only.
func EstablishedConnections(pid int, address string) (int, error) {
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return 0, fmt.Errorf("address %q: %w", address, err)
	}
	ip := net.ParseIP(host)
	port, err := strconv.ParseUint(portText, 10, 16)
	if ip == nil || err != nil {
		return 0, fmt.Errorf("address %q: want an IP literal and a port", address)
	}
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return 0, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
		if err != nil {
			continue // closed since the listing
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	count := 0
	for _, table := range []string{"tcp", "tcp6"} {
		n, err := countEstablished(fmt.Sprintf("/proc/%d/net/%s", pid, table), ip, uint16(port), inodes)
		if err != nil {
			return 0, err
		}
		count += n
	}
	return count, nil
}

// countEstablished counts the rows of a /proc/net/tcp{,6} table in state ESTABLISHED (01) whose remote address is
// ip:port and whose inode is one of inodes. Addresses there are hex, each 32-bit word in host (little-endian)
// order.
func countEstablished(path string, ip net.IP, port uint16, inodes map[string]bool) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		if os.IsNotExist(err) {
			return 0, nil
		}
		return 0, err
	}
	defer f.Close()
	count := 0
	scanner := bufio.NewScanner(f)
	scanner.Scan() // header
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 10 || fields[3] != "01" || !inodes[fields[9]] {
			continue
		}
		remoteIP, remotePort, err := parseProcAddress(fields[2])
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		if remotePort == port && remoteIP.Equal(ip) {
			count++
		}
	}
	return count, scanner.Err()
}

// parseProcAddress parses a /proc/net/tcp address "HEXIP:HEXPORT".
func parseProcAddress(s string) (net.IP, uint16, error) {
	ipHex, portHex, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0, fmt.Errorf("address %q: no port", s)
	}
	raw, err := hex.DecodeString(ipHex)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, 0, fmt.Errorf("address %q: bad IP", s)
	}
	for i := 0; i < len(raw); i += 4 { // each 32-bit word is in host (little-endian) order
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		return nil, 0, fmt.Errorf("address %q: bad port", s)
	}
	return net.IP(raw), uint16(port), nil
}
