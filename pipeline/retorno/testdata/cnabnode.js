// cnabnode.js is the independent side of remessa's CNAB round trip
// (pipeline/retorno/roundtrip_test.go): records written and read by
// @banco-br/nodejs-cnab's record functions (readLine formats a record's
// fields by their pictures, makeLine cuts a line by positions) over
// @banco-br/cnab_yaml's layout tables, each bank's table laid over the
// generic one as cnab_yaml intends. Nothing of remessa's tables is used.
//
//   node cnabnode.js write LAYOUT IN.json OUT  a remessa: IN is [{table, fields}], one per record
//   node cnabnode.js read LAYOUT FILE          a retorno: prints [{table, fields}] as JSON
//
// LAYOUT is cnab240, cnab400-237 or cnab400-341. Run with NODE_PATH naming
// the node_modules folder the packages were installed in.
'use strict';
const fs = require('fs');
const path = require('path');
const utils = require('@banco-br/nodejs-cnab/dist/lib/utils');

const root = path.dirname(require.resolve('@banco-br/cnab_yaml/package.json'));

function spec(layout) {
  switch (layout) {
    case 'cnab240': return { kind: '240', banks: ['generic'], width: 240 };
    // Bradesco's remessa tables are whole (every position), its retorno
    // tables override the generic ones
    case 'cnab400-237': return { kind: '400', banks: ['generic', '237'], remessaBanks: ['237'], width: 400 };
    // cnab_yaml's own 341 remessa table overlaps its positions (e.g.
    // nosso_numero over 111-120): the generic table is Itaú's layout
    case 'cnab400-341': return { kind: '400', banks: ['generic', '341'], remessaBanks: ['generic'], width: 400 };
  }
  throw new Error('layout ' + layout);
}

// table merges the generic table and the bank's for a record ("remessa" or
// "retorno" direction); fields sorted by position.
function table(s, dir, name) {
  const merged = {};
  let found = false;
  const banks = (dir === 'remessa' && s.remessaBanks) || s.banks;
  for (const b of banks) {
    for (const p of [path.join(root, 'cnab' + s.kind, b, dir, name + '.yml'), path.join(root, 'cnab' + s.kind, b, name + '.yml')]) {
      if (fs.existsSync(p)) {
        Object.assign(merged, utils.readYaml(p));
        found = true;
        break;
      }
    }
  }
  if (!found) throw new Error('no table ' + name + ' for ' + s.kind + ' ' + banks);
  const out = {};
  Object.keys(merged).filter(k => merged[k] && merged[k].pos).sort((a, b) => merged[a].pos[0] - merged[b].pos[0]).forEach(k => { out[k] = merged[k]; });
  return out;
}

function write(layout, inPath, outPath) {
  const s = spec(layout);
  const recs = JSON.parse(fs.readFileSync(inPath, 'utf8'));
  const lines = recs.map(r => {
    const t = table(s, 'remessa', r.table);
    const line = Array(s.width).fill(' ');
    for (const k of Object.keys(t)) {
      let item = t[k];
      // readLine knows the date formats %d%m%Y and %d%m%y only: a time
      // (%H%M%S) is given as its digits, a plain number
      if (item.date_format && item.date_format !== '%d%m%Y' && item.date_format !== '%d%m%y') {
        item = Object.assign({}, item);
        delete item.date_format;
      }
      const v = utils.readLine({ [k]: item }, r.fields).line;
      const [a, b] = t[k].pos;
      for (let i = 0; i < b - a + 1 && i < v.length; i++) line[a - 1 + i] = v[i];
    }
    return line.join('');
  });
  fs.writeFileSync(outPath, lines.join('\r\n') + '\r\n', 'latin1');
}

function recordOf(s, line) {
  if (s.kind === '240') {
    switch (line[7]) {
      case '0': return 'header_arquivo';
      case '1': return 'header_lote';
      case '3': return 'detalhe_segmento_' + line[13].toLowerCase();
      case '5': return 'trailer_lote';
      case '9': return 'trailer_arquivo';
    }
  } else {
    switch (line[0]) {
      case '0': return 'header_arquivo';
      case '1': return 'detalhe';
      case '9': return 'trailer_arquivo';
    }
  }
  throw new Error('record ' + JSON.stringify(line.slice(0, 14)));
}

function read(layout, file) {
  const s = spec(layout);
  const text = fs.readFileSync(file, 'latin1');
  const out = text.split('\r\n').filter(l => l.length > 0).map(line => {
    if (line.length !== s.width) throw new Error('line of ' + line.length + ' positions');
    const name = recordOf(s, line);
    return { table: name, fields: utils.makeLine(table(s, 'retorno', name), line) };
  });
  process.stdout.write(JSON.stringify(out));
}

const [cmd, layout, a, b] = process.argv.slice(2);
if (cmd === 'write') write(layout, a, b);
else if (cmd === 'read') read(layout, a);
else { console.error('usage: cnabnode.js write|read LAYOUT ...'); process.exit(2); }
