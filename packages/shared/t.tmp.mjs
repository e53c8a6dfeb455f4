import { countTokens, encode, isWithinTokenLimit } from 'gpt-tokenizer/encoding/cl100k_base';
for (const n of [1000, 10000, 100000, 1000000]) {
  for (const [name, s] of [['a', 'a'.repeat(n)], ['rand', Array.from({length:n},()=>String.fromCharCode(97+Math.floor(Math.random()*26))).join('')], ['b64', Buffer.from(Array.from({length:n*3/4|0},()=>Math.random()*256|0)).toString('base64')], ['cjk', Array.from({length:n},()=>String.fromCharCode(0x4e00+Math.floor(Math.random()*2000))).join('')]]) {
    const t0 = performance.now(); const c = countTokens(s); const t1 = performance.now(); const w = isWithinTokenLimit(s, 512); const t2 = performance.now();
    console.log(n, name, c, (t1-t0).toFixed(1)+'ms', 'within', w, (t2-t1).toFixed(1)+'ms');
  }
}
