package sandbox

import "github.com/dop251/goja"

// defineConnector puts ctx.<connector> on ctx as an accessor that builds the
// connector's object, one host function per method, when the script first
// reads it. A phase uses one or two of the connectors the facade offers, and
// every host function costs the runtime about a kilobyte; building them all
// for every phase was a fifth of what a consumer run allocated. Assigning to
// ctx.<connector> replaces it, as it did when it was a plain property.
func (r *run) defineConnector(ctx *goja.Object, c *facadeConn) {
	var obj goja.Value
	get := func(goja.FunctionCall) goja.Value {
		if obj == nil {
			o := r.vm.NewObject()
			for j := range c.methods {
				_ = o.Set(c.methods[j].method, r.connectorCall(&c.methods[j]))
			}
			obj = o
		}
		return obj
	}
	set := func(call goja.FunctionCall) goja.Value {
		obj = call.Argument(0)
		return goja.Undefined()
	}
	_ = ctx.DefineAccessorProperty(c.name, r.vm.ToValue(get), r.vm.ToValue(set), goja.FLAG_TRUE, goja.FLAG_TRUE)
}
