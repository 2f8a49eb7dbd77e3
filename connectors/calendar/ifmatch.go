package calendar

import (
	"context"
	"net/http"
	"reflect"

	"keep/connectors"
)

// ifMatch is the header that makes a write to obj (read as the event
// uid) fail if the object changed since: If-Match on its ETag. A server
// that gave no ETag with the read leaves nothing to send, and a write
// without one overwrites (or deletes) whatever another client made of the
// event meanwhile; so the object is read again, and the write refused if
// it is no longer what was read. The second read's ETag, if it gives one,
// belongs to that same content, and guards the write from here on.
func (c *Connector) ifMatch(ctx context.Context, obj *found, uid string) (http.Header, error) {
	header := http.Header{}
	if obj.etag == "" {
		again, err := c.cal.GetCalendarObject(ctx, obj.path)
		if statusOf(err) == http.StatusNotFound {
			return nil, connectors.Errorf(connectors.Logic,
				"calendar: the event %q at %s was deleted on the server since it was read; nothing was written", uid, obj.path)
		}
		if err != nil {
			return nil, classify(err, false)
		}
		if !reflect.DeepEqual(again.Data.Component, obj.cal.Component) {
			return nil, connectors.Errorf(connectors.Logic,
				"calendar: the event %q at %s changed on the server since it was read, and the server gives no ETag to guard a write with; nothing was written: read the event again", uid, obj.path)
		}
		obj.etag = again.ETag
	}
	if obj.etag != "" {
		header.Set("If-Match", quoteETag(obj.etag))
	}
	return header, nil
}
