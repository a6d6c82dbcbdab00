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
  withIntervals("chart-headline", ["originals", "perturbations", "consistency"],
    [m.original_accuracy, m.perturbed_accuracy, m.consistency],
    [iv.original_accuracy, iv.perturbed_accuracy, iv.consistency]);
  const tags = Object.keys(m.per_tag || {});
  withIntervals("chart-tags", tags.map((t) => `${t} (${m.per_tag[t].count})`),
    tags.map((t) => m.per_tag[t].accuracy), tags.map((t) => (iv.per_tag || {})[t]));
})();
