package model

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stepwise-dev/stepwise/engine/chat"
	"github.com/stepwise-dev/stepwise/engine/config"
)

// maxAttempts is how many times one candidate is tried on transient
// failures before the call moves to the next fallback.
const maxAttempts = 3

// ScriptProviderName is the provider that Reply and Resolve name when
// Options.ScriptFile answers every call; the model is the one the
// configuration resolves the name to, or this name too when it resolves
// none.
const ScriptProviderName = "script"

// Options controls New.
type Options struct {
	// ScriptFile, when set, answers every role and every name from this
	// replies file, whatever the configuration says (stepwise run
	// --script). The configuration may then be nil.
	ScriptFile string
	// Scripts are replies files already loaded, by the file name
	// ScriptFile or a script provider's file gives: a command that checks
	// them before a run hands them over, so that no file is read twice.
	// A file that is not here is loaded when a call first needs it.
	Scripts map[string]*Script
	// Replay, when not nil (even empty), answers every role and every
	// name from these recorded calls, whatever the configuration and
	// ScriptFile say: no model is called (stepwise replay). Replies come
	// back under provider "replay" and the model that made each one, with
	// zero usage.
	Replay []RecordedCall
	// Backoff is the wait before retry n of a candidate, n being 1 for the
	// first retry. Nil: 250ms·2^(n-1) with jitter, at most 4s. A server's
	// Retry-After wins when it is longer.
	Backoff func(n int) time.Duration
	// OnFailover, when set, is told each time a call gives up on one
	// candidate and moves to the next; from and to are "provider/model".
	// The engine turns it into a warning event.
	OnFailover func(from, to string, err error)
}

// Models is the engine's way to a model: it resolves a role or a named
// model through the configuration, calls the provider that serves it with
// retries, and falls over to the entry's fallbacks on outages. One Models
// serves one run: providers keep per-run state (a script provider's used
// replies), so a fresh Models starts a script from the top. It is safe for
// concurrent use.
type Models struct {
	cfg  *config.Config
	opts Options

	mu        sync.Mutex
	providers map[string]opened // by provider name
}

// opened is a provider as first constructed, or why it could not be. The
// error is kept too: a run should not reread a broken file at every call.
type opened struct {
	p   Provider
	err error
}

// New returns the models of one run. Nothing is opened until a call needs
// it, so a configuration with a provider a run never uses (an unset API
// key) costs nothing.
func New(cfg *config.Config, opts Options) *Models {
	if opts.Backoff == nil {
		opts.Backoff = defaultBackoff
	}
	return &Models{cfg: cfg, opts: opts, providers: map[string]opened{}}
}

// defaultBackoff doubles from 250ms up to 4s. Half of each wait is random,
// so that the map items that failed together do not retry together.
func defaultBackoff(n int) time.Duration {
	d := 4 * time.Second
	if n >= 1 && n <= 5 {
		d = min(d, 250*time.Millisecond<<(n-1))
	}
	return d/2 + rand.N(d/2+1)
}

// candidate is one provider and model a call may be answered by, with the
// settings of its model entry.
type candidate struct {
	provider, model string
	temperature     *float64
	maxTokens       int
	thinking        *config.Thinking
	effort          string
}

func (c candidate) String() string { return c.provider + "/" + c.model }

// candidates resolves a name to the entry's primary and its fallbacks.
func (m *Models) candidates(name string) ([]candidate, error) {
	if m.opts.Replay != nil {
		return []candidate{{provider: ReplayProviderName, model: replayModel}}, nil
	}
	if m.opts.ScriptFile != "" {
		// The script answers, but under the model the configuration
		// names, so that [pricing] and named models can be tried offline.
		model := ScriptProviderName
		if m.cfg != nil {
			if ref, err := m.cfg.ResolveModel(name); err == nil {
				model = ref.Model
			}
		}
		return []candidate{{provider: ScriptProviderName, model: model}}, nil
	}
	if m.cfg == nil {
		return nil, errors.New("no configuration: models cannot be resolved")
	}
	ref, err := m.cfg.ResolveModel(name)
	if err != nil {
		return nil, err
	}
	out := []candidate{{provider: ref.Provider, model: ref.Model, temperature: ref.Temperature,
		maxTokens: ref.MaxTokens, thinking: ref.Thinking, effort: ref.Effort}}
	for _, f := range ref.Fallbacks {
		out = append(out, candidate{provider: f.Provider, model: f.Model, temperature: f.Temperature,
			maxTokens: f.MaxTokens, thinking: f.Thinking, effort: f.Effort})
	}
	return out, nil
}

// Resolve names the provider and model a name resolves to (its primary,
// before any failover), for display. An empty name is the chat role.
func (m *Models) Resolve(name string) (provider, model string, err error) {
	if name == "" {
		name = RoleChat
	}
	cs, err := m.candidates(name)
	if err != nil {
		return "", "", err
	}
	return cs[0].provider, cs[0].model, nil
}

// Call makes one model call. name is a role or a named model; empty means
// req.Role. An empty Role takes the name when the name is a role and is
// chat otherwise, so that a script reply's role fits.
//
// Transient failures (*Error with Transient set, and attempts that run
// past req.Timeout) are retried up to three times per candidate, a
// streamed part declared void first with a Reset delta; then the call
// falls over to the entry's next fallback, telling Options.OnFailover. A
// permanent error, a cancelled ctx, or a last attempt that had streamed
// ends the call: the caller has shown part of an answer, and another model
// would start a different one.
// Reply.Provider and Reply.Model name what answered.
func (m *Models) Call(ctx context.Context, name string, req chat.Request, onDelta func(chat.Delta)) (chat.Reply, error) {
	name, req = callDefaults(name, req)
	// The key that sets the attempts' time, for the error of one that
	// runs past it: a user raises the one that applies.
	timeoutKey := "the step's llm_timeout_seconds"
	if req.Timeout == 0 {
		req.Timeout = m.settingSeconds(func(s config.Settings) int { return s.LLMTimeoutSeconds }, defaultLLMTimeout)
		timeoutKey = "[settings] llm_timeout_seconds"
	}
	cands, err := m.candidates(name)
	if err != nil {
		return chat.Reply{}, err
	}
	asked := req.Temperature
	var reply chat.Reply
	var retries []string // why each failed attempt failed, across the candidates
	for i, c := range cands {
		p, err := m.provider(c.provider)
		if err != nil {
			err = fmt.Errorf("model %s: %w", c, err)
			if i > 0 {
				err = fmt.Errorf("falling over from %s: %w", cands[i-1], err)
			}
			return chat.Reply{}, err
		}
		req.Temperature = asked
		if req.Temperature == nil {
			req.Temperature = c.temperature
		}
		req.MaxTokens, req.Thinking, req.Effort = c.maxTokens, c.thinking, c.effort
		var streamed bool
		var failed []string
		reply, streamed, failed, err = m.attempt(ctx, p, c, req, timeoutKey, onDelta)
		retries = append(retries, failed...)
		if err == nil {
			reply.Provider = c.provider
			if c.provider != ReplayProviderName {
				// A replayed reply names the model that made it.
				reply.Model = c.model
			}
			break
		}
		if !IsTransient(err) || ctx.Err() != nil || i == len(cands)-1 {
			return chat.Reply{}, err
		}
		if streamed {
			// Said, so that a user who configured the fallback for just
			// such a failure learns why it did not answer.
			return chat.Reply{}, fmt.Errorf("%w (the fallback %s was not tried: part of the answer had streamed)", err, cands[i+1])
		}
		if m.opts.OnFailover != nil {
			m.opts.OnFailover(c.String(), cands[i+1].String(), err)
		}
		retries = append(retries, err.Error())
	}
	reply.Retries = retries
	return reply, nil
}

// modelRoles are the roles a call may be made in.
var modelRoles = []string{RoleChat, RoleRepair, RoleJudge, RoleSolver, RolePlanner}

// callDefaults fills in the name and role of a call: an empty name is the
// request's role, and an empty role is the name when that is a role, chat
// otherwise (a prompt tool calling a named model).
func callDefaults(name string, req chat.Request) (string, chat.Request) {
	if name == "" {
		name = req.Role
	}
	if name == "" {
		name = RoleChat
	}
	if req.Role == "" {
		req.Role = RoleChat
		if slices.Contains(modelRoles, name) {
			req.Role = name
		}
	}
	return name, req
}

// attempt tries one candidate up to maxAttempts times, each for
// req.Timeout, which timeoutKey sets. streamed reports whether the failing
// attempt had sent a delta; failed says why each attempt that was retried
// failed.
func (m *Models) attempt(ctx context.Context, p Provider, c candidate, req chat.Request, timeoutKey string, onDelta func(chat.Delta)) (chat.Reply, bool, []string, error) {
	var retried error // the transient failure behind the latest retry
	var failed []string
	// A transient failure after part of a reply has streamed (a request
	// that ran out of its time, which seeds/002 abandons and sends again,
	// or a stream that ended short) is retried too: the reader is told
	// with a Reset delta that what streamed is void, and the answer starts
	// again. Another model would start a different one, so Call falls over
	// only from an attempt that streamed nothing.
	var streamed atomic.Bool
	relay := onDelta
	if onDelta != nil {
		relay = func(d chat.Delta) {
			streamed.Store(true)
			onDelta(d)
		}
	}
	for n := 1; ; n++ {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if req.Timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, req.Timeout)
		}
		actx = withIdleTimeout(actx, m.settingSeconds(func(s config.Settings) int { return s.LLMIdleTimeoutSeconds }, defaultLLMIdleTimeout))
		if m.cfg != nil {
			actx = withReplyLimit(actx, m.cfg.Limits.ModelReplyBytes)
		}
		reply, err := p.Complete(actx, c.model, req, relay)
		timedOut := err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if err == nil {
			return reply, false, failed, nil
		}
		if timedOut {
			err = &Error{Provider: c.provider, Model: c.model, Message: "timed out after " + req.Timeout.String() + " (" + timeoutKey + ")", Transient: true}
		}
		var e *Error
		if errors.As(err, &e) {
			// A server's message may quote the request's URL, a key in its
			// query among it.
			e.Message = m.cfg.Redact(e.Message)
		}
		if !errors.As(err, &e) || !e.Transient || ctx.Err() != nil {
			if retried != nil {
				// A retry that fails otherwise must not hide why it was
				// retried: a scripted 429 with no reply after it reads as
				// a missing reply alone.
				err = fmt.Errorf("%w (while retrying after: %v)", err, retried)
			}
			return chat.Reply{}, streamed.Load(), failed, err
		}
		if limit := m.settingSeconds(func(s config.Settings) int { return s.RetryAfterCapSeconds }, defaultRetryAfterCap); e.RetryAfter > limit {
			// An hour's wait is no retry: the call fails, saying what the
			// server asked, and a fallback may answer instead.
			return chat.Reply{}, streamed.Load(), failed, fmt.Errorf("%w (the server asked to wait %s before a retry, more than [settings] retry_after_cap_seconds = %d)",
				err, e.RetryAfter, int(limit/time.Second))
		}
		retried = err
		if n == maxAttempts {
			return chat.Reply{}, streamed.Load(), failed, fmt.Errorf("%w (gave up after %d attempts)", err, n)
		}
		failed = append(failed, err.Error())
		if streamed.Swap(false) {
			onDelta(chat.Delta{Reset: true, Failure: err.Error()})
		}
		wait := max(m.opts.Backoff(n), e.RetryAfter)
		if err := sleep(ctx, wait); err != nil {
			return chat.Reply{}, streamed.Load(), failed, err
		}
	}
}

// The bounds of a model call when no configuration sets them: seeds/002's
// 600 s an attempt, a minute of silence in a response, and a minute of a
// server's Retry-After.
const (
	defaultLLMTimeout     = 600 * time.Second
	defaultLLMIdleTimeout = 60 * time.Second
	defaultRetryAfterCap  = 60 * time.Second
)

// settingSeconds is a [settings] value in seconds, or def without a
// configuration (a script or a replay answers).
func (m *Models) settingSeconds(get func(config.Settings) int, def time.Duration) time.Duration {
	if m.cfg == nil || get(m.cfg.Settings) <= 0 {
		return def
	}
	return time.Duration(get(m.cfg.Settings)) * time.Second
}

// IsTransient reports whether err is a model failure that a retry or a
// fallback may cure.
func IsTransient(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Transient
}

// provider returns the provider configured under name, opening it on first
// use. Opening happens under the lock, so concurrent first calls share one
// provider and one script's state.
func (m *Models) provider(name string) (Provider, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.providers[name]; ok {
		return o.p, o.err
	}
	p, err := m.open(name)
	m.providers[name] = opened{p, err}
	return p, err
}

// open constructs the provider configured under name by its type, or the
// one script provider when Options.ScriptFile answers everything, or the
// replay provider when Options.Replay does.
func (m *Models) open(name string) (Provider, error) {
	if m.opts.Replay != nil {
		return newReplayProvider(m.opts.Replay), nil
	}
	if m.opts.ScriptFile != "" {
		return m.scriptProvider(name, m.opts.ScriptFile)
	}
	pc, err := m.cfg.Provider(name)
	if err != nil {
		return nil, err
	}
	if pc.Type == config.ProviderScript {
		return m.scriptProvider(name, pc.File)
	}
	open, ok := providerTypes[pc.Type]
	if !ok {
		return nil, unavailable(pc.Type)
	}
	return open(name, pc)
}

// scriptProvider opens a script provider on a replies file, loaded
// already (Options.Scripts) or now.
func (m *Models) scriptProvider(name, file string) (Provider, error) {
	s := m.opts.Scripts[file]
	if s == nil {
		var err error
		if s, err = LoadScript(file); err != nil {
			return nil, err
		}
	}
	return newScriptProvider(name, s), nil
}

// providerTypes opens a provider of each API type from its configuration
// entry. A script provider (Models.scriptProvider) is opened apart, since
// its file may be loaded already, and a replay provider is not configured
// at all: a replay answers from a recorded run, which Options.Replay
// carries.
var providerTypes = map[config.ProviderType]func(name string, p config.Provider) (Provider, error){
	config.ProviderOpenAI:       newOpenAIProvider,
	config.ProviderOpenAICompat: newOpenAIProvider,
	config.ProviderAnthropic:    newAnthropicProvider,
}

// ErrNotAvailable marks a provider type that configuration accepts but
// this build of stepwise cannot call yet. Test for it with errors.Is.
var ErrNotAvailable = errors.New("provider type not available")

// unavailableError is a provider type without an implementation.
type unavailableError struct{ typ config.ProviderType }

func (e *unavailableError) Error() string {
	return fmt.Sprintf(`provider type %s is not supported; use a script provider (type = "script") or stepwise run --script FILE`, e.typ)
}

// Is reports whether target is ErrNotAvailable.
func (e *unavailableError) Is(target error) bool { return target == ErrNotAvailable }

func unavailable(t config.ProviderType) error { return &unavailableError{typ: t} }
