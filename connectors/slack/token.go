package slack

import (
	"context"

	"keep/connectors"
)

// givenToken is a token handed to New as it is (Config.Token), as an
// account, so every request is authorized the one way.
type givenToken string

var _ connectors.Account = givenToken("")

func (t givenToken) Name() string                           { return "connectors.slack" }
func (t givenToken) Kind() string                           { return "token" }
func (t givenToken) Username() string                       { return "" }
func (t givenToken) Secret(context.Context) (string, error) { return string(t), nil }
func (t givenToken) Invalidate()                            {}
