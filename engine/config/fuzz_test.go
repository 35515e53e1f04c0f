package config

import (
	"testing"
)

// FuzzLoad runs arbitrary text through the whole load of one file: decoding,
// indexing, merging over a global layer, expansion, path resolution and the
// checks. Whatever the input, loading must not panic, must return either a
// configuration or a *LoadError, and every accessor must work on what it
// returns.
func FuzzLoad(f *testing.F) {
	seeds := []string{
		"",
		modelsConfig,
		"[settings]\ndata_dir = \"${HOME}/x\"\nmax_agent_iterations = 3\n",
		"[providers.o]\ntype = \"openai\"\napi_key = \"${UNSET}\"\n[mcp.m]\nurl = \"https://x\"\nheaders = { A = \"${UNSET}\" }\n",
		"[mcp.x.tool_overrides.t]\noutput_schema = { type = \"object\", properties = { a = { type = \"string\" } } }\n",
		"[[models.chat.fallbacks]]\nprovider = \"a\"\nmodel = \"b\"\n[[models.chat.fallbacks]]\nprovider = \"c\"\n",
		"[pricing.\"a.b\"]\ninput = 1\noutput = 2\ncache_read = 0.1\n",
		"a.b.c = 1\n[a]\nx = [[1, 2], [\"a\"], { q = 1 }]\n",
		"[modles.chat]\nArgs = 1\n[Settings]\n",
		"[settings\n",
		"x = \"\"\"\n${A}\n\"\"\"\n",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	global := source{file: "/global/config.toml", base: "/global", data: []byte(
		"[providers.a]\ntype = \"openai\"\n[models]\ndefault = { provider = \"a\", model = \"m\" }\n[mcp.m]\ncommand = \"m\"\n")}
	env := lookupFrom(map[string]string{"HOME": "/home/u", "A": "1"})
	f.Fuzz(func(t *testing.T, text string) {
		b := newBuilder(env, "/work")
		b.project = &Project{Root: "/work", Dir: "/work/.stepwise", Kind: KindStepwise}
		project := source{file: "/work/.stepwise/config.toml", base: "/work", data: []byte(text)}
		cfg, _, err := b.build([]source{global, project}, Overrides{})
		if err != nil {
			if _, ok := err.(*LoadError); !ok {
				t.Fatalf("error %T, want *LoadError", err)
			}
			if cfg != nil {
				t.Fatal("a configuration came back with an error")
			}
			return
		}
		for _, name := range cfg.ModelNames() {
			if _, err := cfg.ResolveModel(name); err != nil {
				t.Fatalf("ModelNames lists %q but ResolveModel fails: %v", name, err)
			}
		}
		for _, name := range cfg.ProviderNames() {
			_, _ = cfg.Provider(name)
		}
		for _, name := range cfg.MCPServerNames() {
			_, _ = cfg.MCPServer(name)
		}
		for model := range cfg.Pricing {
			_, _ = cfg.Price(model)
		}
	})
}
