package store

import (
	"strings"
	"testing"
)

// TestRedactionPayload hides secrets in payload JSON wherever they lie in
// it, in each form a payload holds them, after the anchors have been
// chosen from payloads full of the secrets' other bytes.
func TestRedactionPayload(t *testing.T) {
	rd := newRedaction([]Secret{
		{Value: "sk-longer-0123456789", Ref: "${LONG}"},
		{Value: "0123456789", Ref: "${SHORT}"},
		{Value: `tok-"q\uoted`, Ref: "${QUOTED}"},
	})
	// Anchors chosen from payloads made of the secrets' common bytes.
	rd.payload([]byte(strings.Repeat(`{"tool":"sk-0123","t":"tok-q"}`, 4000)))
	for _, tc := range []struct{ name, in, want string }{
		{"none", `{"text":"sk-longer-012345678 tok-q"}`, `{"text":"sk-longer-012345678 tok-q"}`},
		{"whole", `sk-longer-0123456789`, `${LONG}`},
		{"at the ends", `{"a":"sk-longer-0123456789","b":"x0123456789"}`, `{"a":"${LONG}","b":"x${SHORT}"}`},
		{"twice", `0123456789 and 0123456789`, `${SHORT} and ${SHORT}`},
		{"escaped once", `{"text":"tok-\"q\\uoted"}`, `{"text":"${QUOTED}"}`},
		{"escaped twice", `{"text":"{\"k\":\"tok-\\\"q\\\\uoted\"}"}`, `{"text":"{\"k\":\"${QUOTED}\"}"}`},
		{"cut short", `{"text":"tok-\"q\\uote"}`, `{"text":"tok-\"q\\uote"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, hidden := rd.payload([]byte(tc.in))
			if string(got) != tc.want || hidden != (tc.in != tc.want) {
				t.Errorf("payload(%s) = %s, %v, want %s", tc.in, got, hidden, tc.want)
			}
		})
	}
	if got := rd.text(`failed: tok-"q\uoted, sk-longer-0123456789`); got != `failed: ${QUOTED}, ${LONG}` {
		t.Errorf("text = %s", got)
	}
	if newRedaction(nil) != nil || newRedaction([]Secret{{Value: "", Ref: "${EMPTY}"}}) != nil {
		t.Error("a redaction of no secrets is not nil")
	}
}
