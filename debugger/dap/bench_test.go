package dap

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	godap "github.com/google/go-dap"
)

// BenchmarkStoppedOnTheWire measures a stop's way from the session to the
// editor: from the State a movement came to, to the stopped event read off
// the wire (target: under 1 ms).
func BenchmarkStoppedOnTheWire(b *testing.B) {
	demoProject(b)
	c := newClient(b)
	c.start(map[string]any{"program": "issue_timeline", "stopOnEntry": true, "inputs": map[string]any{"id": "CHK-107"}})
	c.request("configurationDone", nil)
	c.stopped("entry")
	c.srv.mu.Lock()
	st := c.srv.last
	c.srv.mu.Unlock()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		c.srv.arrive(st, nil)
		expect[*godap.StoppedEvent](c)
	}
	b.StopTimer()
	c.request("disconnect", nil)
	expect[*godap.DisconnectResponse](c)
}

// BenchmarkVariablesOfABigArray measures a variables response for an
// array of 1,000 objects, every item listed: from the request written to
// the response read off the wire whole (target: under 1 ms). The response
// is read as bytes: decoding it is the editor's time, not the adapter's.
func BenchmarkVariablesOfABigArray(b *testing.B) {
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	srv := NewServer(toServer, fromServer)
	go srv.Serve(context.Background())
	defer fromClient.Close()
	items := make([]any, 1000)
	for i := range items {
		items[i] = map[string]any{"id": fmt.Sprintf("CHK-%d", i), "priority": float64(i % 4), "labels": []any{"checkout"}}
	}
	srv.mu.Lock()
	ref, _, _ := srv.values.add(items, "E0.issues")
	srv.mu.Unlock()
	request := fmt.Appendf(nil, `{"seq":1,"type":"request","command":"variables","arguments":{"variablesReference":%d}}`, ref)
	wire := bufio.NewReader(toClient)
	var resp []byte
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// Each response registers its items' handles; a stop drops them,
		// as the run moving on does.
		srv.mu.Lock()
		srv.values.nodes = srv.values.nodes[:ref]
		srv.mu.Unlock()
		if err := godap.WriteBaseMessage(fromClient, request); err != nil {
			b.Fatal(err)
		}
		var err error
		if resp, err = godap.ReadBaseMessage(wire); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if !bytes.Contains(resp, []byte(`"name":"999"`)) {
		b.Fatalf("the response %.200s...; want the 1,000 items", resp)
	}
}

// TestDAPVariablesPaging: an editor pages a large array by start and
// count, and each item reads at its template path.
func TestDAPVariablesPaging(t *testing.T) {
	c := newClient(t)
	items := make([]any, 1000)
	for i := range items {
		items[i] = float64(i)
	}
	c.srv.mu.Lock()
	ref, _, _ := c.srv.values.add(map[string]any{"issues": items}, "E0")
	c.srv.mu.Unlock()
	c.request("variables", map[string]any{"variablesReference": ref})
	issues := expect[*godap.VariablesResponse](c).Body.Variables[0]
	if issues.IndexedVariables != 1000 || issues.Value != "[…] 1000 items" {
		t.Fatalf("the array shows as %+v", issues)
	}
	c.request("variables", map[string]any{"variablesReference": issues.VariablesReference, "filter": "indexed", "start": 990, "count": 20})
	page := expect[*godap.VariablesResponse](c).Body.Variables
	if len(page) != 10 || page[0].Name != "990" || page[0].Value != "990" || page[0].EvaluateName != "E0.issues.990" {
		t.Errorf("the page from 990 is %+v", page)
	}
	c.request("variables", map[string]any{"variablesReference": 999})
	if e := expectError(c); e.Message == "" {
		t.Error("an unknown reference is an error with no message")
	}
}
