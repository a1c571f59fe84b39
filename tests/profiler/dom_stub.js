// A minimal DOM for running the HTML report's script under node (tests only): records the
// elements the script creates so the test can check that the chart was drawn.
'use strict';
const fs = require('fs');
const created = [];
function makeElement(name) {
  const e = {
    name, attrs: {}, children: [], style: {}, listeners: {}, textContent: '', innerHTML: '', className: '',
    get firstChild() { return this.children[0] || null; },
    setAttribute(k, v) { this.attrs[k] = String(v); },
    appendChild(c) { this.children.push(c); return c; },
    removeChild(c) { this.children.splice(this.children.indexOf(c), 1); return c; },
    addEventListener(type, fn) { this.listeners[type] = fn; },
    getBoundingClientRect() { return {left: 0, top: 0}; },
  };
  created.push(e);
  return e;
}
const byId = {};
global.document = {
  getElementById(id) { return byId[id] || (byId[id] = makeElement(id)); },
  createElementNS(ns, name) { return makeElement(name); },
  createElement(name) { return makeElement(name); },
  querySelectorAll() { return []; },
};
const page = fs.readFileSync(process.argv[2], 'utf8');
const script = page.slice(page.indexOf('<script>') + 8, page.indexOf('</script>'));
eval(script);
const chart = byId.chart;
const polygons = chart.children.filter(c => c.name === 'polygon');
// hover over the middle of the chart
const overlay = chart.children[chart.children.length - 1];
overlay.listeners.mousemove({clientX: 600, pageX: 600, pageY: 100});
console.log(JSON.stringify({polygons: polygons.length, children: chart.children.length,
                            tip: byId.tip.textContent, legend: byId.legend.children.length}));
