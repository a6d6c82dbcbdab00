// Evaluation results: bars with 95% bootstrap intervals drawn as thin floating bars.
(function () {
  "use strict";
  const m = JSON.parse(document.getElementById("run-metrics").textContent);
  const pct = (x) => (x === null || x === undefined ? null : Math.round(x * 1000) / 10);
  function withIntervals(id, labels, values, intervals) {
    new Chart(document.getElementById(id), {
      data: {
        labels,
        datasets: [
          { type: "bar", label: "value", data: values.map(pct), backgroundColor: "#2f5bd3", order: 2 },
          { type: "bar", label: "95% interval", data: intervals.map((iv) => (iv ? [pct(iv[0]), pct(iv[1])] : null)),
            backgroundColor: "rgba(29, 35, 48, 0.75)", barPercentage: 0.12, grouped: false, order: 1 },
        ],
      },
      options: { animation: false, scales: { y: { min: 0, max: 100, title: { display: true, text: "%" } } } },
    });
  }
  const iv = m.intervals || {};
  if ("pair_accuracy" in m) {  // a language model on minimal pairs
    withIntervals("chart-headline", ["pair accuracy", "consistency"],
      [m.pair_accuracy, m.consistency], [iv.pair_accuracy, iv.consistency]);
    const h = m.differences || { edges: [], counts: [] };
    new Chart(document.getElementById("chart-differences"), {
      type: "bar",
      data: {
        labels: h.counts.map((_, i) => `${h.edges[i].toFixed(2)} to ${h.edges[i + 1].toFixed(2)}`),
        datasets: [{ label: "pairs", data: h.counts, backgroundColor: "#2f5bd3" }],
      },
      options: { animation: false, scales: { y: { ticks: { precision: 0 }, title: { display: true, text: "pairs" } },
        x: { title: { display: true, text: "score(correct) - score(contrastive); right of 0 is right" } } } },
    });
  } else if ("original_f1" in m) {  // free-text answers: EM and F1
    withIntervals("chart-headline",
      ["EM originals", "F1 originals", "EM perturbations", "F1 perturbations", "consistency"],
      [m.original_em, m.original_f1, m.perturbed_em, m.perturbed_f1, m.consistency],
      [iv.original_em, iv.original_f1, iv.perturbed_em, iv.perturbed_f1, iv.consistency]);
  } else {
    withIntervals("chart-headline", ["originals", "perturbations", "consistency"],
      [m.original_accuracy, m.perturbed_accuracy, m.consistency],
      [iv.original_accuracy, iv.perturbed_accuracy, iv.consistency]);
  }
  const tags = Object.keys(m.per_tag || {});
  withIntervals("chart-tags", tags.map((t) => `${t} (${m.per_tag[t].count})`),
    tags.map((t) => m.per_tag[t].f1 ?? m.per_tag[t].accuracy), tags.map((t) => (iv.per_tag || {})[t]));
})();
