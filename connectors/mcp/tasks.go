package mcp

import (
	"bytes"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool may declare execution.taskSupport "required": it runs only as a
// task (tools/call with a task, then tasks/get and tasks/result). The go
// SDK keep is built on offers no tasks, and drops the field when it reads a
// tool list, so keep reads it off the tools/list answer as it passes (a
// stdio server's in frameCap, an HTTP server's in tasks_http.go), keeps it in the tool's _meta (and so in the cache),
// and refuses such a tool before anything is sent: `keep mcp tools` and
// `keep validate` say it cannot be called.

// metaTaskSupport is where keep keeps a tool's execution.taskSupport.
const metaTaskSupport = "keep/taskSupport"

// taskOnlyWhy is what keep says of a tool it cannot call.
const taskOnlyWhy = "the tool runs only as an MCP task (execution.taskSupport: required), which keep's MCP client does not offer"

// sniffTasks reads the taskSupport of each tool in a tools/list answer.
func (c *Connector) sniffTasks(line []byte) {
	if !bytes.Contains(line, []byte(`"taskSupport"`)) {
		return
	}
	var msg struct {
		Method string `json:"method"`
		Result struct {
			Tools []struct {
				Name      string `json:"name"`
				Execution struct {
					TaskSupport string `json:"taskSupport"`
				} `json:"execution"`
			} `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.taskSupport == nil {
		c.taskSupport = map[string]string{}
	}
	for _, t := range msg.Result.Tools {
		c.taskSupport[t.Name] = t.Execution.TaskSupport
	}
}

// markTasks writes what sniffTasks read into the tools' _meta; c.mu held.
func (c *Connector) markTasks(tools []*sdk.Tool) {
	for _, t := range tools {
		if ts := c.taskSupport[t.Name]; ts != "" {
			if t.Meta == nil {
				t.Meta = sdk.Meta{}
			}
			t.Meta[metaTaskSupport] = ts
		}
	}
}

// uncallable says why keep cannot call t; "" when it can.
func uncallable(t *sdk.Tool) string {
	if ts, _ := t.Meta[metaTaskSupport].(string); ts == "required" {
		return taskOnlyWhy
	}
	return ""
}
