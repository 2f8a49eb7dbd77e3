package service

import (
	"encoding/xml"
	"maps"
	"slices"
	"strings"
)

// unit is the systemd user unit. Restart=on-failure: a crash restarts it,
// a clean stop (keep finishes or parks its run, exits 0) does not.
func unit(o Opts) string {
	return `[Unit]
Description=keep, a local automation host
After=network-online.target

[Service]
Type=simple
ExecStart=` + strings.Join([]string{systemdQuote(o.Binary), "--daemon", "--db", systemdQuote(o.DB), "--config", systemdQuote(o.Config)}, " ") + `
` + envLine(o) + `Restart=on-failure
RestartSec=5s
# keep finishes or parks the run in hand on SIGTERM
TimeoutStopSec=5min

[Install]
WantedBy=default.target
`
}

// envLine points systemd at the file holding the variables the config
// names (written by Install), when there are any. EnvironmentFile= takes
// the rest of its line as the path, unquoted (quotes would make it "not
// absolute", and systemd would start keep without the variables): only
// its specifiers are escaped.
func envLine(o Opts) string {
	if len(o.Env) == 0 {
		return ""
	}
	return "EnvironmentFile=" + strings.ReplaceAll(EnvFile(o), "%", "%%") + "\n"
}

// systemdQuote quotes a path for ExecStart: double quotes when it holds
// anything systemd would split or interpret; "%" is a specifier, "%%" a
// percent sign.
func systemdQuote(s string) string {
	s = strings.ReplaceAll(s, "%", "%%")
	if !strings.ContainsAny(s, " \t\"'\\;$") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `$$`)
	return `"` + r.Replace(s) + `"`
}

// plist is the launchd agent: it runs at login and is started again when
// it exits with a failure.
func plist(o Opts) string {
	var args strings.Builder
	for _, a := range []string{o.Binary, "--daemon", "--db", o.DB, "--config", o.Config} {
		args.WriteString("\t\t<string>" + xmlText(a) + "</string>\n")
	}
	return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + label + `</string>
	<key>ProgramArguments</key>
	<array>
` + args.String() + `	</array>
` + plistEnv(o) + `	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>ProcessType</key>
	<string>Background</string>
</dict>
</plist>
`
}

// plistEnv is the agent's EnvironmentVariables, when there are any.
func plistEnv(o Opts) string {
	if len(o.Env) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\t<key>EnvironmentVariables</key>\n\t<dict>\n")
	for _, k := range slices.Sorted(maps.Keys(o.Env)) {
		b.WriteString("\t\t<key>" + xmlText(k) + "</key>\n\t\t<string>" + xmlText(o.Env[k]) + "</string>\n")
	}
	b.WriteString("\t</dict>\n")
	return b.String()
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
