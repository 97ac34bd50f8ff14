package pipeline

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// DecodeStrict decodes a YAML document into target (a pointer to a struct
// tagged like JobSpec: yaml, req, enum, secret, nullempty) with the job
// loader's strict rules: unknown keys, repeated keys, wrong types and
// missing required keys are problems at their line and column, and
// ${VAR}/${VAR:default} is interpolated from getenv (nil: the process
// environment). It is how other job shapes (the follow-up actions of
// pipeline/actions) read their files exactly as Load reads a job. It
// returns the position of every value by JSON pointer and the problems
// (nil when there are none).
func DecodeStrict(name string, data []byte, target any, getenv func(string) (string, bool)) (map[string]Pos, []JobProblem) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	var root yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&root); err != nil {
		p := JobProblem{File: name, Code: "yaml_invalido"}
		var te *yaml.TypeError
		msg := err.Error()
		if errors.As(err, &te) {
			msg = strings.Join(te.Errors, "; ")
		}
		p.Line = yamlErrLine(msg)
		p.Message, p.MessageEN = "YAML inválido: "+msg, "invalid YAML: "+msg
		if strings.Contains(msg, "EOF") {
			p.Message, p.MessageEN = "arquivo de job vazio", "empty job file"
		}
		return nil, []JobProblem{p}
	}
	d := &decoder{file: name, env: getenv, pos: map[string]Pos{}}
	d.decode(&root, reflect.ValueOf(target).Elem(), "")
	return d.pos, d.probs
}

// TopLevelKeys returns the keys of a YAML document's top-level mapping
// (nil when it is not one), so a caller can tell a job that issues
// (issue:) from one that acts on an earlier run (action:) before loading it.
func TopLevelKeys(data []byte) []string {
	var root yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&root); err != nil || len(root.Content) == 0 {
		return nil
	}
	n := root.Content[0]
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var ks []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		ks = append(ks, n.Content[i].Value)
	}
	return ks
}

// SchemaOfType is the JSON Schema of a spec struct type, derived the way
// Schema derives the job file's (for other job shapes).
func SchemaOfType(t reflect.Type, lang string) map[string]any { return schemaOf(t, lang) }
