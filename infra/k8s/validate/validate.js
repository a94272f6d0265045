#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
//
// infra/k8s/validate/validate.js -- schema validation of Kubernetes
// manifests: every document of every YAML file given is looked up by its
// apiVersion and kind in kubernetes-models (classes generated from the
// Kubernetes 1.27 OpenAPI, each with an ajv validator) and validated:
// types, required fields, enums and formats.  A document whose
// apiVersion/kind has no schema is an error too (we never skip what we
// cannot check).  Unknown fields are not errors in Kubernetes' own schemas
// (the API server drops them); tests/e2e/test_infra_k8s.py checks the
// fields we rely on (GPU requests, node selection, secrets) by name.
//
//   npm ci && node validate.js ../*.yaml
//
// Prints one line per document ("ok FILE#N Kind/name" or "INVALID ...")
// and exits 0 when all are valid, 1 when some is not, 2 on bad usage.
"use strict";

const fs = require("fs");
const YAML = require("yaml");

function modelFor(apiVersion, kind) {
  if (typeof apiVersion !== "string" || typeof kind !== "string")
    throw new Error("no apiVersion or kind");
  // "v1" is the core group; "apps/v1", "networking.k8s.io/v1" are paths.
  let mod;
  try {
    mod = require("kubernetes-models/" + apiVersion);
  } catch (e) {
    throw new Error(`no schema for apiVersion ${apiVersion}`);
  }
  const cls = mod[kind];
  if (typeof cls !== "function")
    throw new Error(`no schema for ${apiVersion} ${kind}`);
  return cls;
}

function main(files) {
  if (!files.length) {
    console.error("usage: node validate.js FILE.yaml...");
    return 2;
  }
  let bad = 0, n = 0;
  for (const file of files) {
    let docs;
    try {
      docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
    } catch (e) {
      console.log(`INVALID ${file}: ${e.message}`);
      bad++;
      continue;
    }
    docs.forEach((doc, i) => {
      const where = `${file}#${i + 1}`;
      if (doc.errors.length) {
        console.log(`INVALID ${where}: YAML: ${doc.errors[0].message}`);
        bad++;
        return;
      }
      const obj = doc.toJS();
      if (obj === null || obj === undefined) return; // empty document
      n++;
      const name = `${obj.kind}/${obj.metadata && obj.metadata.name}`;
      try {
        const Model = modelFor(obj.apiVersion, obj.kind);
        new Model(obj).validate();
        console.log(`ok ${where} ${name}`);
      } catch (e) {
        console.log(`INVALID ${where} ${name}: ${e.message}`);
        bad++;
      }
    });
  }
  console.log(`${n} documents, ${bad} invalid`);
  return bad ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
