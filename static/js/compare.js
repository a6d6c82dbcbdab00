// Compare runs: the two runs side by side, one group of bars per figure (percent).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("compare-data").textContent);
  const colours = ["#2f5bd3", "#e08a1e"];
  new Chart(document.getElementById("chart-compare"), {
    type: "bar",
    data: {
      labels: data.figures,
      datasets: data.runs.map((run, i) => ({
        label: run.name,
        data: run.values.map((v) => (v === null || v === undefined ? null : Math.round(v * 1000) / 10)),
        backgroundColor: colours[i % colours.length],
      })),
    },
    options: { animation: false, responsive: true, maintainAspectRatio: false, plugins: { legend: { display: true } },
      scales: { y: { title: { display: true, text: "%" } } } },
  });
})();
