// Analysis charts: instability's variance parts and run accuracies; inoculation's curves.
(function () {
  "use strict";
  const r = JSON.parse(document.getElementById("analysis-result").textContent);
  const kind = document.getElementById("results").dataset.kind;
  const colours = ["#2f5bd3", "#d0862f", "#3f9d5a", "#a23fb8", "#b83f3f"];
  if (kind === "instability") {
    const units = ["original", "perturbed", "consistency"];
    new Chart(document.getElementById("chart-parts"), {
      type: "bar",
      data: { labels: units, datasets: [
        { label: "independent part", data: units.map((u) => r[u].independent), backgroundColor: colours[0] },
        { label: "covariance part", data: units.map((u) => r[u].covariance), backgroundColor: colours[1] },
      ] },
      options: { animation: false, scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: "variance" } } } },
    });
    new Chart(document.getElementById("chart-runs"), {
      type: "scatter",
      data: { datasets: units.map((u, j) => ({
        label: u, backgroundColor: colours[j],
        data: r[u].accuracies.map((a, k) => ({ x: k + 1, y: Math.round(a * 1000) / 10 })),
      })) },
      options: { animation: false, scales: { x: { title: { display: true, text: "run" }, ticks: { precision: 0 } },
        y: { title: { display: true, text: "accuracy %" } } } },
    });
  } else if (kind === "inoculation") {
    const rates = [...new Set(r.points.map((p) => p.learning_rate))];
    const datasets = [];
    rates.forEach((rate, j) => {
      const points = r.points.filter((p) => p.learning_rate === rate);
      for (const [key, name, dash] of [["original_accuracy", "original", []], ["contrast_accuracy", "contrast", [6, 4]]]) {
        datasets.push({ label: `${name}, lr ${rate}`, borderColor: colours[j % colours.length], borderDash: dash,
          data: points.map((p) => ({ x: p.size, y: Math.round(p[key] * 1000) / 10 })), showLine: true });
      }
    });
    new Chart(document.getElementById("chart-curves"), {
      type: "scatter", data: { datasets },
      options: { animation: false, scales: { x: { title: { display: true, text: "contrast sets fine-tuned on" }, ticks: { precision: 0 } },
        y: { min: 0, max: 100, title: { display: true, text: "accuracy %" } } } },
    });
  }
})();
