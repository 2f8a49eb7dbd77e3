package engine

// What the command line (main.go) needs from keep's lower packages, exposed
// here so main imports only engine, tui and workflows (issue 14): the
// database file, the config, the event bus, a workflow file's checks, the
// connector reference and the user service. Thin aliases and wrappers, no
// logic: the packages they name stay the single place each thing lives.
// engine/daemon and engine/benchmark import engine, so they cannot be
// wrapped here; main imports them as engine's own subpackages.

import (
	"context"
	"runtime/debug"
	"time"

	"keep/connectors"
	"keep/connectors/accounts"
	"keep/engine/bus"
	"keep/engine/config"
	"keep/engine/reference"
	"keep/engine/service"
	"keep/sandbox"
	"keep/storage"
)

// The database file.
type (
	DB          = storage.DB
	DBOpts      = storage.Opts
	LockedError = storage.LockedError // another process holds the database
)

// OpenDB opens (creating and migrating) the ledger at o.Path.
func OpenDB(ctx context.Context, o DBOpts) (*DB, error) { return storage.Open(ctx, o) }

// CheckDBFile refuses a file at path that is not a keep database, creating
// nothing (OpenDB asks it too, before its lock file).
func CheckDBFile(ctx context.Context, path string) error { return storage.CheckFile(ctx, path) }

// BackupFile writes a consistent copy of the database at dbPath to path.
func BackupFile(ctx context.Context, dbPath, path string) error {
	return storage.BackupFile(ctx, dbPath, path)
}

// RestoreDB replaces the database at path with the backup from.
func RestoreDB(ctx context.Context, from, path string) error { return storage.Restore(ctx, from, path) }

// SchemaVersion is the schema version this binary writes.
func SchemaVersion() int { return storage.SchemaVersion() }

// FileVersion is the schema version of the database file at path.
func FileVersion(ctx context.Context, path string) (int, error) {
	return storage.FileVersion(ctx, path)
}

// The config file.
type Config = config.Config

func DefaultConfig() Config     { return config.Default() }
func DefaultConfigPath() string { return config.DefaultPath() }

// ConfigDigest, ConfigChanged and WatchConfig: a config change reaching
// the running engine (engine/config/reload.go).
func ConfigDigest(c Config) string           { return config.Digest(c) }
func ConfigChanged(old, cur Config) []string { return config.Changed(old, cur) }
func WatchConfig(ctx context.Context, path string, changed func()) error {
	return config.Watch(ctx, path, changed)
}

// WriteDefaultConfig writes keep init's config file: every default, mode
// 0600, never over an existing file.
func WriteDefaultConfig(path string) error { return config.WriteDefault(path) }

// LoadConfig reads the config at path; explicit: a missing file is an error.
func LoadConfig(path string, explicit bool) (Config, error) { return config.Load(path, explicit) }

// The event bus.
type (
	Bus             = bus.Bus
	BusOpts         = bus.Opts
	BusHandler      = bus.Handler
	BusSubscription = bus.Subscription
)

// NotifyUserHandler is the name the built-in desktop notification handler
// is wired under.
const NotifyUserHandler = bus.NotifyUserHandler

func NewBus(db *DB, o BusOpts) *Bus { return bus.New(db, o) }

// NotifyUser is the built-in handler that shows an event to the user.
func NotifyUser(notify func(title, text string)) BusHandler { return bus.NotifyUser(notify) }

// A workflow file and its checks.
type (
	Script          = sandbox.Script
	LoadOptions     = sandbox.LoadOptions
	MethodSpec      = sandbox.MethodSpec
	MethodKind      = sandbox.MethodKind
	ValidationError = sandbox.ValidationError
	// Manifest is what a workflow version may do (host_manifest.go).
	Manifest = sandbox.Manifest
)

// ReadFile reads a workflow file, refusing what is not one.
func ReadFile(path string) ([]byte, error) { return sandbox.ReadFile(path) }

// LoadScript compiles and checks a workflow file's source.
func LoadScript(fileName string, src []byte, o LoadOptions) (*Script, error) {
	return sandbox.Load(fileName, src, o)
}

// Connectors and accounts.
type (
	Registry      = connectors.Registry
	AccountStore  = accounts.Store
	LoginOpts     = accounts.LoginOpts
	AccountStatus = accounts.Status
	Reference     = reference.Ref
)

// JSConfig is the jsconfig.json that makes an editor check workflow files.
const JSConfig = reference.JSConfig

// LoadOptionsOf is what a workflow file is checked against: reg's methods,
// their argument types and input sources, as keep.d.ts declares them.
func LoadOptionsOf(reg *Registry, minInterval time.Duration) LoadOptions {
	return reference.LoadOptions(reg, minInterval)
}

// BuildReference is the API reference of the connectors in reg.
func BuildReference(reg *Registry) Reference { return reference.Build(reg) }

// CheckWorkflowName is the one rule for a workflow's name, wherever the
// name comes from (the file, deploy --name, a proposal, keep edit).
func CheckWorkflowName(name string) error { return sandbox.CheckWorkflowName(name) }

// The user service that runs keep --daemon.
type (
	ServiceOpts    = service.Opts
	ServiceState   = service.State
	ServiceOutcome = service.Outcome
)

// What InstallService did (service.Outcome).
const (
	ServiceStarted   = service.Started
	ServiceUnchanged = service.Unchanged
	ServiceRewritten = service.Rewritten
)

func InstallService(ctx context.Context, o ServiceOpts) (string, ServiceOutcome, error) {
	return service.Install(ctx, o)
}
func UninstallService(ctx context.Context, o ServiceOpts) (path string, removed bool, err error) {
	return service.Uninstall(ctx, o)
}
func ServiceStatus(ctx context.Context, o ServiceOpts) (ServiceState, error) {
	return service.Status(ctx, o)
}

// What keep service install checks, and what keep version says.
type ServiceEnv = service.Env

func CheckServiceBinary(bin string) error { return service.CheckBinary(bin, "") }
func ServiceEnvOf(cfg Config) ServiceEnv  { return service.EnvOf(cfg) }
func BuildVersion(bi *debug.BuildInfo) (version, revision string, modified bool) {
	return service.Version(bi)
}
