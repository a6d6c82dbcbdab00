// Dashboard charts, drawn from the stats the server embedded in the page.
(function () {
  "use strict";
  const stats = JSON.parse(document.getElementById("stats-data").textContent);
  const accent = "#2f5bd3";
  function bars(id, labels, values, options = {}) {
    const canvas = document.getElementById(id);
    if (!canvas) return;
    new Chart(canvas, {
      type: "bar",
      data: { labels, datasets: [{ data: values, backgroundColor: options.colors || accent }] },
      options: {
        animation: false,
        plugins: { legend: { display: false } },
        scales: { y: { beginAtZero: true, max: options.max } },
        indexAxis: options.horizontal ? "y" : "x",
      },
    });
  }
  const votes = stats.label_distribution.votes;
  bars("chart-labels", Object.keys(votes), Object.values(votes));
  bars("chart-votes", Object.keys(stats.votes_per_item), Object.values(stats.votes_per_item));
  bars("chart-agreement", Object.keys(stats.agreement_histogram), Object.values(stats.agreement_histogram));
  const validators = stats.validators.filter((v) => v.agreement !== null);
  bars("chart-validators", validators.map((v) => v.validator), validators.map((v) => v.agreement),
       { max: 1, colors: validators.map((v) => (v.qualified ? accent : "#b3261e")) });
})();
